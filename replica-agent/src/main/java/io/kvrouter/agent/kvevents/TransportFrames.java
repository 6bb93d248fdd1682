package io.kvrouter.agent.kvevents;

import io.kvrouter.protocol.engine.ZmqFrames;
import java.util.List;

/**
 * Parses the frame layouts of vLLM's KV-event transport (vLLM {@code
 * vllm/distributed/kv_events.py}, {@code ZmqEventPublisher}; see {@code docs/kv-events.md}, section
 * 1), independent of any socket:
 *
 * <ul>
 *   <li>live PUB: {@code [topic, seq8, payload]} (a bare {@code [seq8, payload]} is accepted);
 *   <li>replay reply as a DEALER receives it, after the empty delimiter: 2 frames {@code [seq8,
 *       payload]} (old layout, SGLang) or 3 frames {@code [topic, seq8, payload]} (vLLM ≥0.26); an
 *       empty payload (with seq8 = {@code ff×8}) marks the end of the replay.
 * </ul>
 *
 * Stateless.
 */
public final class TransportFrames {

  /**
   * One parsed message.
   *
   * @param seq the engine sequence number
   * @param payload msgpack batch, or empty for the end-of-replay marker
   */
  public record Message(long seq, byte[] payload) {

    /** True for the end-of-replay marker. */
    public boolean endOfReplay() {
      return payload.length == 0;
    }
  }

  private TransportFrames() {}

  /**
   * Parses a live PUB message.
   *
   * @return the message, or null when the frames are not a KV-event message
   */
  public static Message live(List<byte[]> frames) {
    if (frames.size() < 2 || frames.size() > 3) {
      return null;
    }
    return tail(frames);
  }

  /**
   * Parses a replay reply as received by a DEALER, with or without the leading empty delimiter.
   *
   * @return the message (maybe the end marker), or null when malformed
   */
  public static Message replay(List<byte[]> frames) {
    List<byte[]> f = frames;
    if (f.size() >= 3 && f.get(0).length == 0) {
      f = f.subList(1, f.size());
    }
    if (f.size() < 2 || f.size() > 3) {
      return null;
    }
    return tail(f);
  }

  private static Message tail(List<byte[]> f) {
    byte[] seqFrame = f.get(f.size() - 2);
    if (seqFrame.length != 8) {
      return null;
    }
    return new Message(ZmqFrames.seq(seqFrame), f.get(f.size() - 1));
  }
}
