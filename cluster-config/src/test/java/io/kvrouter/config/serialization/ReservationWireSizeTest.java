package io.kvrouter.config.serialization;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import io.kvrouter.config.serialization.WireTraffic.Direction;
import io.kvrouter.protocol.CompactPrefillCompleted;
import io.kvrouter.protocol.CompactReleased;
import io.kvrouter.protocol.CompactReserved;
import io.kvrouter.protocol.PrefillCompleted;
import io.kvrouter.protocol.Released;
import io.kvrouter.protocol.Reserved;
import io.kvrouter.protocol.RouteIntent;
import io.kvrouter.protocol.SharedTiming;
import io.kvrouter.protocol.WirePlane;
import java.util.SplittableRandom;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What one routed request's reservation costs on the wire, per peer, as {@link KryoSerializer}
 * writes it: the full form (0.1.0's, and the {@code legacy} reservation wire) against the compact
 * form. The sample is a typical one: an origin address and request id as the ingress makes them, a
 * random 64-bit member uid and block keys (worst-case varint lengths), seqs in the thousands, a
 * prompt of some hundred tokens.
 */
class ReservationWireSizeTest {

  private static final String ORIGIN = "pekko://kvrouter@127.0.0.1:25521";
  private static final String REQUEST = "req-3f2b8c1e-9a47-4d2b-8f6e-0c5a7d9e1b23#1";
  private static final long UID = 0xd3a9_1c24_4e01_b5f7L;
  private static final long SEQ = 5_000;
  private static final long ISSUED = 1_764_600_000_000L;

  private static ActorSystem<Void> system;
  private static Serialization serialization;

  @BeforeAll
  static void start() {
    system =
        ActorSystem.create(
            Behaviors.empty(),
            "kvrouter-wire-size",
            ConfigFactory.parseString("pekko.actor.provider = local")
                .withFallback(ConfigFactory.load()));
    serialization = SerializationExtension.get(Adapter.toClassic(system));
  }

  @AfterAll
  static void stop() {
    system.terminate();
  }

  private static int size(Object message) {
    return serialization.serialize(message).get().length;
  }

  private static long[] randomKeys(int n) {
    SplittableRandom random = new SplittableRandom(n);
    long[] keys = new long[n];
    for (int i = 0; i < n; i++) {
      keys[i] = random.nextLong() | Long.MIN_VALUE; // 9 bytes as a Kryo varint, 8 packed
    }
    return keys;
  }

  private static int compactRequest(long[] keys) {
    return size(new CompactReserved(UID, SEQ, "sim-0", 60, 450, CompactReserved.pack(keys), ISSUED))
        + size(new CompactPrefillCompleted(UID, SEQ + 3, 3))
        + size(new CompactReleased(UID, SEQ + 9, 9));
  }

  private static int fullRequest(long[] keys) {
    long anchor = randomKeys(1)[0];
    return size(new Reserved(ORIGIN, SEQ, REQUEST, "sim-0", 60, 450, anchor, keys, 600_000, ISSUED))
        + size(new PrefillCompleted(ORIGIN, SEQ + 3, REQUEST))
        + size(new Released(ORIGIN, SEQ + 9, REQUEST));
  }

  @Test
  void compactEvents_haveTheSizesTheirJavadocStates() {
    assertThat(size(new CompactReserved(UID, SEQ, "sim-0", 60, 450, new byte[0], ISSUED)))
        .as("CompactReserved without new keys")
        .isEqualTo(28);
    assertThat(
            size(
                new CompactReserved(
                    UID, SEQ, "sim-0", 60, 450, CompactReserved.pack(randomKeys(4)), ISSUED)))
        .as("8 bytes per new key")
        .isEqualTo(28 + 4 * 8);
    assertThat(size(new CompactPrefillCompleted(UID, SEQ + 3, 3))).isEqualTo(14);
    assertThat(size(new CompactReleased(UID, SEQ + 9, 9))).isEqualTo(14);
  }

  /** Prints the sizes of intents, for their Javadoc; asserts the bound it states. */
  @Test
  void intents_haveTheSizesTheirJavadocStates() {
    int none =
        size(new RouteIntent(UID, ISSUED, "kvrouter-demo", 4_096, new String[0], new int[0]));
    int two =
        size(
            new RouteIntent(
                UID,
                ISSUED,
                "kvrouter-demo",
                4_096,
                new String[] {"sim-0", "sim-1"},
                new int[] {1_024, 3_000}));
    int timing = size(new SharedTiming(UID, 16.5, 15.18, 4.21, 1.0));
    System.out.printf(
        "RouteIntent: %d bytes, %d with two holders; SharedTiming %d%n", none, two, timing);
    assertThat(none).as("without holders").isEqualTo(21 + "kvrouter-demo".length());
    assertThat(two - none).as("two holders of 5-character ids").isEqualTo(2 * 7);
    assertThat(timing).isEqualTo(43);
  }

  @Test
  void aRoutedRequest_costs56BytesPlus8PerNewBlock_aFifthOfTheFullForm() {
    for (int n = 0; n <= 5; n++) {
      assertThat(compactRequest(randomKeys(n))).as("%d new blocks", n).isEqualTo(56 + 8 * n);
    }
    assertThat(fullRequest(new long[0])).as("the full form, no new blocks").isEqualTo(264);
    assertThat(fullRequest(randomKeys(5)) - fullRequest(new long[0]))
        .as("the full form's 5 new blocks: 9 bytes each as Kryo varints (10 for some keys)")
        .isEqualTo(5 * 9);
    assertThat(compactRequest(new long[0]) * 4).isLessThan(fullRequest(new long[0]));
  }

  @Test
  void compactEvents_countOnTheReservationPlane() {
    WireTraffic traffic = WireTraffic.get(system);
    long before = traffic.bytes(WirePlane.RESERVATIONS, Direction.SENT);
    int bytes = size(new CompactReleased(UID, SEQ, 1));
    assertThat(traffic.bytes(WirePlane.RESERVATIONS, Direction.SENT) - before).isEqualTo(bytes);
  }
}
