package io.kvrouter.cli;

/**
 * Switches off every library's telemetry before anything else loads. DJL's tokenizers phone home on
 * first use (a cloud metadata address, then a telemetry host) unless offline; kvrouter never sends
 * traffic anywhere its user did not configure. The launcher sets the same properties; this covers
 * {@code java -jar} started by hand.
 */
final class Telemetry {

  private Telemetry() {}

  static void switchOff() {
    System.setProperty("ai.djl.offline", "true");
    System.setProperty("OPT_OUT_TRACKING", "true");
  }
}
