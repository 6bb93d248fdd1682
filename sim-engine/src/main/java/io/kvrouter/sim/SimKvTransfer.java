package io.kvrouter.sim;

/**
 * How long a decode engine waits for a prompt's KV pulled from a prefill engine: the blocks it
 * lacks times their size, over the link's bandwidth, plus a fixed handshake cost.
 *
 * <p>Defaults: 131,072 bytes of KV per token, which is Llama-3.1-8B's (2 tensors × 32 layers × 8 KV
 * heads × 128 dimensions × 2 bytes, from its {@code config.json}); 25 GB/s, one 200 Gb/s RDMA NIC
 * as NIXL drives it; 1 ms per transfer for the connector's handshake and notification. The figures
 * are a plausible deployment, not a measurement; the options of {@code sim-engine} change them.
 *
 * @param bytesPerToken KV bytes one token occupies
 * @param bytesPerSecond transfer bandwidth
 * @param fixedMicros cost of each transfer regardless of size
 */
public record SimKvTransfer(long bytesPerToken, double bytesPerSecond, long fixedMicros) {

  public SimKvTransfer {
    if (bytesPerToken < 0 || !(bytesPerSecond > 0) || fixedMicros < 0) {
      throw new IllegalArgumentException(
          "bytesPerToken and fixedMicros must be >= 0 and bytesPerSecond > 0");
    }
  }

  /** 128 KiB per token, 25 GB/s, 1 ms. */
  public static SimKvTransfer defaults() {
    return new SimKvTransfer(131_072, 25e9, 1_000);
  }

  /** The transfer time of {@code blocks} blocks of {@code blockSize} tokens, in microseconds. */
  public long micros(int blocks, int blockSize) {
    if (blocks <= 0) {
      return fixedMicros;
    }
    double bytes = (double) blocks * blockSize * bytesPerToken;
    return fixedMicros + (long) (bytes / bytesPerSecond * 1e6);
  }
}
