package io.kvrouter.protocol.engine;

/** The 8-byte big-endian sequence frames of vLLM's KV-event transport (spec §1.2, §1.3). */
public final class ZmqFrames {

  /** The end-of-replay marker's sequence frame: {@code ff×8}. */
  public static final long END_OF_REPLAY = -1L;

  private ZmqFrames() {}

  /** Encodes a sequence number as 8 bytes big-endian. */
  public static byte[] seq(long seq) {
    byte[] b = new byte[8];
    for (int i = 7; i >= 0; i--) {
      b[i] = (byte) seq;
      seq >>>= 8;
    }
    return b;
  }

  /**
   * Decodes an 8-byte big-endian sequence frame.
   *
   * @throws IllegalArgumentException when the frame is not 8 bytes
   */
  public static long seq(byte[] frame) {
    if (frame == null || frame.length != 8) {
      throw new IllegalArgumentException(
          "sequence frame must be 8 bytes, was " + (frame == null ? "null" : frame.length));
    }
    long v = 0;
    for (byte x : frame) {
      v = (v << 8) | (x & 0xFF);
    }
    return v;
  }
}
