package io.kvrouter.loadtest.soak;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SoakReportTest {

  /** 100 s of load: heap flat at 50 after a warm-up climb, the index growing 1 per second. */
  private static List<String> csv() {
    List<String> lines = new ArrayList<>();
    lines.add("seconds,phase,heap_after_gc_bytes,index_blocks,open_reservations");
    for (int s = 0; s <= 100; s += 10) {
      lines.add(s + ",load," + (s < 20 ? s * 2 : 50) + "," + s + ",3");
    }
    lines.add("110,cooldown,50,100,0");
    return lines;
  }

  @Test
  void theTable_showsAFlatQuantityAtOne_aGrowingOneAboveIt_andTheValueAfterCoolDown() {
    String table = SoakReport.table(SoakReport.Samples.parse(csv()));

    assertThat(table).contains("12 samples over 100 s of load");
    assertThat(table).contains("| heap_after_gc_bytes | 50 | 50 | 1.00 | 50 | 50 |");
    // early: mean of 20, 30, 40; late: mean of 80, 90, 100
    assertThat(table).contains("| index_blocks | 30 | 90 | 3.00 | 100 | 100 |");
    assertThat(table).contains("| open_reservations | 3 | 3 | 1.00 | 3 | 0 |");
  }

  @Test
  void theChart_isAPng(@TempDir Path dir) throws Exception {
    Path png = dir.resolve("soak.png");
    SoakReport.chart(SoakReport.Samples.parse(csv()), png);
    byte[] head = Files.readAllBytes(png);
    assertThat(head.length).isGreaterThan(1000);
    assertThat(new String(head, 1, 3, java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("PNG");
  }
}
