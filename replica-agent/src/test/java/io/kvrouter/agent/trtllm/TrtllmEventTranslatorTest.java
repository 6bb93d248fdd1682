package io.kvrouter.agent.trtllm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.agent.kvevents.EngineStreamHandler;
import io.kvrouter.protocol.engine.EngineEvent;
import io.kvrouter.protocol.engine.EngineEventBatch;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link TrtllmEventTranslator} on event lists as {@code trtllm-serve}'s {@code /kv_cache_events}
 * answers them ({@code KVCacheEventSerializer}, NVIDIA/TensorRT-LLM {@code tensorrt_llm/_utils.py}
 * at {@code ed53795b}), for what the engine double does not produce: other ranks and window sizes,
 * hash inputs beyond tokens, priority updates, and input that is not the format at all.
 */
class TrtllmEventTranslatorTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int BS = 4;

  /** What the translator handed the pipeline. */
  private static final class Recorder implements EngineStreamHandler {
    final List<EngineEvent> events = new ArrayList<>();
    final List<String> calls = new ArrayList<>();

    @Override
    public void onBatch(long seq, EngineEventBatch batch) {
      events.addAll(batch.events());
    }

    @Override
    public void onEngineRestart(long lastSeq, long newSeq) {
      calls.add("restart " + lastSeq + " -> " + newSeq);
    }

    @Override
    public void onUnrecoverableGap(long fromSeq, long toSeq) {
      calls.add("gap [" + fromSeq + ", " + toSeq + ")");
    }
  }

  private final Recorder rec = new Recorder();
  private final TrtllmEventTranslator translator = new TrtllmEventTranslator(BS, 0, rec);

  private TrtllmEventTranslator.Outcome accept(String json) throws Exception {
    return translator.accept(JSON.readTree(json));
  }

  /** One {@code stored} event of one block of tokens {@code from..from+n-1}. */
  private static String stored(long id, long hash, int from, int n, String extra) {
    StringBuilder tokens = new StringBuilder();
    for (int t = from; t < from + n; t++) {
      tokens.append(tokens.length() == 0 ? "" : ",");
      tokens.append("{\"type\":\"unique_token\",\"token_id\":").append(t);
      tokens.append(",\"token_extra_id\":0}");
    }
    return "{\"event_id\":"
        + id
        + ",\"window_size\":4096,\"data\":{\"type\":\"stored\",\"parent_hash\":null,\"blocks\":"
        + "[{\"type\":\"stored_block\",\"block_hash\":"
        + hash
        + ",\"tokens\":["
        + tokens
        + "],\"cache_level\":0,\"priority\":35"
        + extra
        + "}]}}";
  }

  private static final String CREATED =
      "{\"event_id\":0,\"window_size\":4096,"
          + "\"data\":{\"type\":\"created\",\"num_blocks_per_cache_level\":[64,0]}}";

  @Test
  void unsignedHashes_partialBlocks_andPriorityUpdates() throws Exception {
    accept(
        "["
            + CREATED
            + ","
            + stored(1, Long.parseUnsignedLong("18446744073709551615"), 10, BS, "")
            + ","
            + stored(2, 7, 20, BS - 1, "")
            + ",{\"event_id\":3,\"window_size\":4096,\"data\":{\"type\":\"updated\","
            + "\"block_hash\":18446744073709551615,\"cache_level\":null,"
            + "\"priority\":{\"type\":\"event_diff\",\"new_value\":90,\"old_value\":35}}}]");
    assertThat(rec.events).hasSize(1); // the partial block and the priority change: nothing
    EngineEvent.BlockStored s = (EngineEvent.BlockStored) rec.events.get(0);
    assertThat(s.blockHashes()).containsExactly(-1L);
    assertThat(s.tokenIds()).containsExactly(10, 11, 12, 13);
    assertThat(s.medium()).isEqualTo("GPU");
    assertThat(s.extraKeys()).isNull();
    assertThat(rec.calls).isEmpty();
  }

  @Test
  void hashInputsBeyondTokens_makeTheRunUnkeyable() throws Exception {
    accept("[" + CREATED + "," + stored(1, 5, 10, BS, ",\"lora_id\":3") + "]");
    accept("[" + stored(2, 6, 20, BS, ",\"cache_salt\":\"s\"") + "]");
    for (EngineEvent e : rec.events) {
      assertThat(((EngineEvent.BlockStored) e).extraKeys())
          .containsExactly(
              List.of(new EngineEvent.OpaqueKey("TensorRT-LLM hash input beyond tokens")));
    }
    assertThat(rec.events).hasSize(2);
  }

  @Test
  void otherRanks_andSmallerWindows_areLeftOut() throws Exception {
    String otherRank =
        stored(1, 5, 10, BS, "")
            .replace("{\"event_id\":1,", "{\"event_id\":1," + "\"attention_dp_rank\":1,");
    String slidingWindow =
        stored(1, 6, 20, BS, "").replace("\"window_size\":4096", "\"window_size\":512");
    TrtllmEventTranslator.Outcome o =
        accept("[" + CREATED + "," + otherRank + "," + slidingWindow + "]");
    assertThat(o.ignored()).isEqualTo(1);
    assertThat(rec.events).isEmpty();
    assertThat(rec.calls).isEmpty(); // the other rank's id is not this rank's
  }

  @Test
  void aFirstIdAboveZero_isAGap_andAnIdAtOrBelowTheLast_aRestart() throws Exception {
    accept("[" + stored(7, 5, 10, BS, "") + "]");
    accept("[" + CREATED + "]");
    assertThat(rec.calls).containsExactly("gap [0, 7)", "restart 7 -> 0");
  }

  @Test
  void inputThatIsNotTheFormat_isCountedMalformed_andChangesNothing() throws Exception {
    assertThat(accept("{\"detail\":\"Not Found\"}").malformed()).isEqualTo(1);
    TrtllmEventTranslator.Outcome o =
        accept(
            "[{\"event_id\":\"x\"},{\"event_id\":0,\"data\":{\"type\":\"stored\",\"blocks\":7}},"
                + "{\"event_id\":1,\"data\":{\"type\":\"removed\",\"block_hashes\":[\"a\"]}},"
                + "{\"event_id\":2,\"data\":{\"type\":\"what\"}}]");
    assertThat(o.malformed()).isEqualTo(4);
    assertThat(rec.events).isEmpty();
    assertThat(rec.calls).isEmpty();
    assertThat(translator.lastEventId()).isEqualTo(2);
  }
}
