package io.kvrouter.loadtest.workload;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import org.junit.jupiter.api.Test;

class SharedDirTest {

  @Test
  void configuredProperty_pointsAtTheSharedTraces() {
    assertThat(Files.isRegularFile(SharedDir.trace("mooncake-conversation.jsonl"))).isTrue();
  }

  @Test
  void withoutTheProperty_walksUpFromTheWorkingDirectory() {
    String saved = System.getProperty(SharedDir.PROPERTY);
    System.clearProperty(SharedDir.PROPERTY);
    try {
      assertThat(SharedDir.locate().resolve("traces/mooncake-synthetic.jsonl")).isRegularFile();
    } finally {
      if (saved != null) {
        System.setProperty(SharedDir.PROPERTY, saved);
      }
    }
  }
}
