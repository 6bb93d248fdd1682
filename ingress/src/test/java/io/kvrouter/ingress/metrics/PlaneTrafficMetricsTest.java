package io.kvrouter.ingress.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.config.node.NodeBootstrap;
import io.kvrouter.config.node.NodeSettings;
import io.kvrouter.config.serialization.KryoSerializer;
import io.kvrouter.config.serialization.WireTraffic;
import io.kvrouter.protocol.Reserved;
import io.kvrouter.protocol.metrics.PrometheusText;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class PlaneTrafficMetricsTest {

  private static ActorSystem<Void> system;

  @BeforeAll
  static void start() {
    system =
        NodeBootstrap.start(
            NodeSettings.dev(List.of(NodeSettings.ROLE_INGRESS), List.of()), Map.of());
  }

  @AfterAll
  static void stop() {
    system.terminate();
  }

  @Test
  void aReservationSerializedForAPeer_showsInTheReservationPlaneBytesTheIngressExports() {
    IngressMetrics metrics = new IngressMetrics();
    metrics.tracker().wire(WireTraffic.get(system));
    double before = reservationBytes(metrics, "sent");

    Serialization serialization = SerializationExtension.get(Adapter.toClassic(system));
    byte[] bytes =
        serialization
            .serialize(
                new Reserved(
                    "pekko://kvrouter@127.0.0.1:2551",
                    3,
                    "cmpl-1",
                    "a-0",
                    100,
                    200,
                    7L,
                    new long[] {1, 2, 3, 4},
                    30_000))
            .get();
    serialization.deserialize(bytes, KryoSerializer.IDENTIFIER, "").get();

    assertThat(reservationBytes(metrics, "sent") - before).isEqualTo(bytes.length);
    assertThat(reservationBytes(metrics, "received")).isGreaterThanOrEqualTo(bytes.length);
  }

  @Test
  void theCpuSpentDecodingAPlane_isExportedInSecondsByPlaneAndWork() {
    IngressMetrics metrics = new IngressMetrics();
    WireTraffic traffic = WireTraffic.get(system);
    metrics.tracker().wire(traffic);
    traffic.spent(
        io.kvrouter.protocol.WirePlane.EVENTS, WireTraffic.Work.DECODE, 0, 2_000_000_000L);

    double seconds =
        PrometheusText.parse(metrics.scrape()).samples().stream()
            .filter(s -> s.name().equals("kvrouter_plane_cpu_seconds_total"))
            .filter(s -> "events".equals(s.labels().get("plane")))
            .filter(s -> "decode".equals(s.labels().get("work")))
            .mapToDouble(PrometheusText.Sample::value)
            .sum();
    assertThat(seconds).isGreaterThanOrEqualTo(2.0);
  }

  private static double reservationBytes(IngressMetrics metrics, String direction) {
    return PrometheusText.parse(metrics.scrape()).samples().stream()
        .filter(s -> s.name().equals("kvrouter_plane_bytes_total"))
        .filter(s -> "reservations".equals(s.labels().get("plane")))
        .filter(s -> direction.equals(s.labels().get("direction")))
        .mapToDouble(PrometheusText.Sample::value)
        .sum();
  }
}
