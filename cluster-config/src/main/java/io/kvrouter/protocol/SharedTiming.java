package io.kvrouter.protocol;

/**
 * A router's fitted engine timing model, shared with its peers every mark interval while its policy
 * reads intents: every router predicts with the model of the router whose id sorts first, so that
 * they place each other's requests alike. The four coefficients of the tracker's {@code
 * EngineTiming}, in its order. Also tells the peers that this router announces intents. 43 bytes as
 * {@code KryoSerializer} writes it ({@code ReservationWireSizeTest}).
 */
public record SharedTiming(
    long origin, double passMillis, double perKiloToken, double quadratic, double decodeScale)
    implements IntentMessage {

  @Override
  public SharedTiming from(long uid) {
    return new SharedTiming(uid, passMillis, perKiloToken, quadratic, decodeScale);
  }
}
