package io.kvrouter.loadtest.workload;

/**
 * One stage of an open-loop arrival schedule: Poisson arrivals at {@code qps} for {@code seconds}.
 *
 * @param qps mean requests per second, positive
 * @param seconds stage length, positive
 */
public record RateStage(double qps, double seconds) {

  public RateStage {
    if (!(qps > 0) || Double.isInfinite(qps) || !(seconds > 0) || Double.isInfinite(seconds)) {
      throw new IllegalArgumentException(
          "stage needs positive finite qps and seconds, got " + qps + " qps for " + seconds + " s");
    }
  }

  /** Parses {@code "qps:seconds"}, e.g. {@code "15:50"}. */
  public static RateStage parse(String text) {
    String[] parts = text.trim().split(":");
    if (parts.length != 2) {
      throw new IllegalArgumentException("stage must look like qps:seconds, got '" + text + "'");
    }
    try {
      return new RateStage(
          Double.parseDouble(parts[0].trim()), Double.parseDouble(parts[1].trim()));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("stage must look like qps:seconds, got '" + text + "'", e);
    }
  }
}
