package io.kvrouter.ingress.tokenize;

/**
 * Keeps DJL off the network. DJL's tokenizer library contacts a cloud metadata address and a
 * telemetry host on first use unless {@code ai.djl.offline=true} (DJL {@code Utils.isOfflineMode})
 * and {@code OPT_OUT_TRACKING=true} are set; kvrouter never sends traffic its user did not
 * configure. The launcher and Surefire set these too; this class sets them again in code so no
 * entry point can forget.
 *
 * <p>Idempotent and thread-safe; costs two system-property writes once per JVM.
 */
final class DjlOffline {

  /** The system property DJL reads to decide offline mode. */
  static final String OFFLINE_PROPERTY = "ai.djl.offline";

  /** The system property (also accepted as an environment variable) that turns tracking off. */
  static final String TRACKING_PROPERTY = "OPT_OUT_TRACKING";

  private DjlOffline() {}

  /**
   * Sets the properties (again, in case something cleared them); call before touching any DJL
   * class. DJL checks both before calling home ({@code ai.djl.util.Ec2Utils.callHome}).
   */
  static void ensure() {
    System.setProperty(OFFLINE_PROPERTY, "true");
    System.setProperty(TRACKING_PROPERTY, "true");
  }
}
