package io.kvrouter.config.serialization;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.protocol.AlignmentStatus;
import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.CompactPrefillCompleted;
import io.kvrouter.protocol.CompactReleased;
import io.kvrouter.protocol.CompactReserved;
import io.kvrouter.protocol.EngineIdentity;
import io.kvrouter.protocol.GateCommand;
import io.kvrouter.protocol.GetInfo;
import io.kvrouter.protocol.GetTrackerReport;
import io.kvrouter.protocol.GetTrackerView;
import io.kvrouter.protocol.KvEvent;
import io.kvrouter.protocol.KvEventBatch;
import io.kvrouter.protocol.PrefillCompleted;
import io.kvrouter.protocol.Released;
import io.kvrouter.protocol.ReplayReservations;
import io.kvrouter.protocol.Replayed;
import io.kvrouter.protocol.ReplicaCleared;
import io.kvrouter.protocol.ReplicaInfo;
import io.kvrouter.protocol.ReplicaLoad;
import io.kvrouter.protocol.ReplicaSnapshot;
import io.kvrouter.protocol.RequestReplay;
import io.kvrouter.protocol.ReservationEvent;
import io.kvrouter.protocol.ReservationMark;
import io.kvrouter.protocol.ReservationReplay;
import io.kvrouter.protocol.Reserved;
import io.kvrouter.protocol.RouteIntent;
import io.kvrouter.protocol.SharedTiming;
import io.kvrouter.protocol.SnapshotReply;
import io.kvrouter.protocol.TenantQuotaCommand;
import io.kvrouter.protocol.Tier;
import io.kvrouter.protocol.TrackerReport;
import io.kvrouter.protocol.TrackerView;
import io.kvrouter.protocol.WindowBlocks;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Wire compatibility between consecutive versions: the bytes of one sample of every message that
 * crosses the wire (every Kryo registration, and the CBOR control messages) as this version writes
 * them are pinned in {@code src/test/resources/wire/<version>.json}; every pinned version must
 * still decode to the same message here, and this version must still write the same bytes.
 *
 * <p>The policy this enforces, for rolling upgrades (one ingress at a time, old and new nodes in
 * one cluster): a Kryo wire record never changes its components (Kryo's record serializer has no
 * field tags, so an added component shifts every later one); a new field means a new record with a
 * new registration id, and the old one stays readable until no supported version sends it. Pinned
 * files are never edited, only added: when a deliberate format change lands, add the new version's
 * file (run with {@code -Dkvrouter.wire.pin=<version>}) and keep the old ones decoding for one
 * release. The file of the version under development ({@link #CURRENT}) may be re-pinned until that
 * version ships; a CBOR control message may gain a field (Jackson ignores unknown properties, and a
 * missing one takes its default), which the older files' decoding checks. Actor references carry
 * their system's address and a random uid, so their bytes are not compared, only that they decode.
 */
class WireCompatibilityTest {

  static final String CURRENT = "0.2.0";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static ActorSystem<Void> system;
  private static Serialization serialization;
  private static ActorRef<Object> replyTo;

  @BeforeAll
  static void start() {
    system =
        ActorSystem.create(
            Behaviors.empty(),
            "kvrouter-wire",
            ConfigFactory.parseString("pekko.actor.provider = local")
                .withFallback(ConfigFactory.load()));
    serialization = SerializationExtension.get(Adapter.toClassic(system));
    replyTo = system.systemActorOf(Behaviors.ignore(), "wire-reply", Props.empty());
  }

  @AfterAll
  static void stop() {
    system.terminate();
  }

  /** One deterministic sample of every message that crosses the wire, by name. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  static Map<String, Object> samples() {
    Map<String, Object> m = new LinkedHashMap<>();
    BlocksStored stored =
        new BlocksStored(-7L, new long[] {11, 12}, new long[] {101, 102}, Tier.GPU);
    BlocksRemoved removed = new BlocksRemoved(new long[] {11}, Tier.CPU);
    KvEventBatch batch =
        new KvEventBatch(
            "sim-0", 3, 42, new KvEvent[] {stored, removed, new ReplicaCleared()}, 1_700_000_000L);
    Reserved reserved =
        new Reserved(
            "pekko://kvrouter@10.0.0.1:25520",
            9,
            "req-1#1",
            "sim-1",
            320,
            400,
            55L,
            new long[] {56, 57},
            30_000,
            1_700_000_001L);
    PrefillCompleted prefilled =
        new PrefillCompleted("pekko://kvrouter@10.0.0.1:25520", 10, "req-1#1");
    Released released = new Released("pekko://kvrouter@10.0.0.1:25520", 11, "req-1#1");
    m.put("KvEventBatch", batch);
    m.put("ReplicaLoad", new ReplicaLoad("sim-0", 3, 2, 1, 0.25, 1000, 600, 1_700_000_002L, 42));
    m.put(
        "KvEventBatchWithWindowBlocks",
        new KvEventBatch(
            "sim-0",
            3,
            43,
            new KvEvent[] {new WindowBlocks(33, new long[] {101, 102}, true)},
            1_700_000_000L));
    m.put("Reserved", reserved);
    m.put("PrefillCompleted", prefilled);
    m.put("Released", released);
    m.put(
        "ReservationReplay",
        new ReservationReplay(
            "pekko://kvrouter@10.0.0.1:25520",
            false,
            12,
            new ReservationEvent[] {reserved, prefilled, released}));
    m.put(
        "CompactReserved",
        new CompactReserved(
            0x7d3a_91c2_44e0_1b5fL,
            9,
            "sim-1",
            320,
            400,
            CompactReserved.pack(new long[] {56, -57}),
            1_700_000_001L));
    m.put("CompactPrefillCompleted", new CompactPrefillCompleted(0x7d3a_91c2_44e0_1b5fL, 10, 1));
    m.put("CompactReleased", new CompactReleased(0x7d3a_91c2_44e0_1b5fL, 11, 2));
    m.put(
        "RouteIntent",
        new RouteIntent(
            0x7d3a_91c2_44e0_1b5fL,
            1_700_000_006L,
            "kvrouter-demo",
            4_096,
            new String[] {"sim-1"},
            new int[] {1_024}));
    m.put("SharedTiming", new SharedTiming(0x7d3a_91c2_44e0_1b5fL, 16.5, 15.18, 4.21, 1.0));
    m.put("ReservationMark", new ReservationMark("pekko://kvrouter@10.0.0.1:25520", 12));
    m.put("Replayed", new Replayed("sim-0", 3, new KvEventBatch[] {batch}));
    m.put(
        "SnapshotReply",
        new SnapshotReply(new ReplicaSnapshot("sim-0", 3, 42, new KvEvent[] {stored})));
    m.put(
        "TrackerView",
        new TrackerView(
            "pekko://kvrouter@10.0.0.1:25520",
            1_700_000_003L,
            new TrackerView.ReplicaMark[] {new TrackerView.ReplicaMark("sim-0", 3, 42, 2, 77)},
            new TrackerView.OriginMark[] {
              new TrackerView.OriginMark("pekko://kvrouter@10.0.0.2:25520", 5, 1, 88)
            },
            true));
    m.put(
        "TrackerReport",
        new TrackerReport(
            (TrackerView) m.get("TrackerView"),
            new TrackerReport.Trim[] {new TrackerReport.Trim("sim-0", 4)},
            new TrackerReport.Accuracy[] {new TrackerReport.Accuracy("sim-0", 16, 9, true)}));
    m.put("GateCommand.Leave", new GateCommand.Leave("req-1"));
    m.put("GateCommand.Admission", new GateCommand.Admission(true, 3));
    m.put(
        "ReplicaInfo",
        new ReplicaInfo(
            "sim-0",
            0,
            "kvrouter-demo",
            "http://10.0.0.3:8000",
            16,
            List.of(Tier.GPU),
            "both",
            true,
            true));
    m.put(
        "ReplicaInfoWithEngine",
        ((ReplicaInfo) m.get("ReplicaInfo"))
            .with(
                new EngineIdentity("vllm", "0.11.0", "sha256_cbor", 16),
                AlignmentStatus.unaligned("block size: the engine stores blocks of 32 tokens")));
    m.put(
        "TenantQuotaCommand.Verdict",
        new TenantQuotaCommand.Verdict(
            false,
            "requests",
            new TenantQuotaCommand.Standing(10, 10, 0, 4_200),
            new TenantQuotaCommand.Standing(0, 0, 0, 0)));
    // With actor references (bytes not compared).
    m.put("GetInfo", new GetInfo((ActorRef) replyTo));
    m.put("GetTrackerView", new GetTrackerView((ActorRef) replyTo));
    m.put("GetTrackerReport", new GetTrackerReport((ActorRef) replyTo));
    m.put("RequestReplay", new RequestReplay("sim-0", 3, 40, (ActorRef) replyTo));
    m.put(
        "ReplayReservations",
        new ReplayReservations("pekko://kvrouter@10.0.0.1:25520", 4, (ActorRef) replyTo));
    m.put("GateCommand.Admit", new GateCommand.Admit("req-1", 2, 30_000, (ActorRef) replyTo));
    m.put(
        "TenantQuotaCommand.Acquire",
        new TenantQuotaCommand.Acquire("team-a", 10, 0, 512, (ActorRef) replyTo));
    return m;
  }

  static boolean hasActorRef(Object message) {
    for (var c : message.getClass().getRecordComponents()) {
      if (ActorRef.class.isAssignableFrom(c.getType())) {
        return true;
      }
    }
    return false;
  }

  private static Path pinned(String version) {
    return Path.of(System.getProperty("user.dir"), "src/test/resources/wire", version + ".json");
  }

  @Test
  void everyWireClass_hasAPinnedSample() {
    List<Class<?>> sampled = samples().values().stream().<Class<?>>map(Object::getClass).toList();
    for (Class<?> type : KryoRegistrations.builtIn().keySet()) {
      if (type.isArray() || type.isEnum() || type.isInterface()) {
        continue; // travel inside the sampled records
      }
      if (type == ReplicaSnapshot.class
          || type == BlocksStored.class
          || type == BlocksRemoved.class
          || type == ReplicaCleared.class
          || type == WindowBlocks.class
          || type == TrackerView.ReplicaMark.class
          || type == TrackerView.OriginMark.class
          || type == TrackerReport.Trim.class
          || type == TrackerReport.Accuracy.class
          || type == TenantQuotaCommand.Standing.class) {
        continue; // sampled inside SnapshotReply, KvEventBatch, TrackerView, TrackerReport, Verdict
      }
      assertThat(sampled).as("a wire sample of %s", type.getName()).contains(type);
    }
  }

  @Test
  void pinnedBytesOfEveryVersion_stillDecodeToTheSameMessages() throws Exception {
    String pin = System.getProperty("kvrouter.wire.pin");
    if (pin != null) {
      write(pinned(pin));
    }
    Path dir = pinned(CURRENT).getParent();
    List<Path> versions;
    try (var files = Files.list(dir)) {
      versions = files.filter(p -> p.toString().endsWith(".json")).sorted().toList();
    }
    assertThat(versions).as("pinned versions in %s", dir).contains(pinned(CURRENT));
    Map<String, Object> samples = samples();
    for (Path version : versions) {
      JsonNode pinnedMessages = JSON.readTree(version.toFile());
      pinnedMessages
          .fields()
          .forEachRemaining(
              e -> {
                Object expected = samples.get(e.getKey());
                assertThat(expected)
                    .as("%s: %s still has a sample", version, e.getKey())
                    .isNotNull();
                Object decoded =
                    serialization
                        .deserialize(
                            HexFormat.of().parseHex(e.getValue().path("hex").asText()),
                            e.getValue().path("serializer").asInt(),
                            e.getValue().path("manifest").asText())
                        .get();
                var comparison =
                    assertThat(decoded)
                        .as("%s %s", version.getFileName(), e.getKey())
                        .usingRecursiveComparison();
                if (hasActorRef(expected)) {
                  comparison.ignoringFields("replyTo").isEqualTo(expected);
                } else {
                  comparison.isEqualTo(expected);
                }
              });
    }
  }

  @Test
  void thisVersion_writesThePinnedBytes() throws Exception {
    JsonNode pinnedMessages = JSON.readTree(pinned(CURRENT).toFile());
    for (var e : samples().entrySet()) {
      if (hasActorRef(e.getValue())) {
        continue;
      }
      assertThat(encode(e.getValue()).toString())
          .as(
              "%s is written differently than %s pinned: a wire format change (see the class"
                  + " Javadoc for the policy)",
              e.getKey(), CURRENT)
          .isEqualTo(pinnedMessages.path(e.getKey()).toString());
    }
  }

  /**
   * A replica's engine identity and alignment verdict travel as CBOR fields {@code engine} and
   * {@code alignment} (the state in lower case), are left out when nothing is known (so older
   * announcements keep their bytes), and an announcement without them reads as nothing known.
   */
  @Test
  void replicaInfo_carriesEngineAndAlignment_asOptionalCborFields() throws Exception {
    ObjectMapper cbor = new ObjectMapper(new com.fasterxml.jackson.dataformat.cbor.CBORFactory());
    ReplicaInfo with = (ReplicaInfo) samples().get("ReplicaInfoWithEngine");
    JsonNode wire = cbor.readTree(serialization.serialize(with).get());
    assertThat(wire.path("engine").path("kind").asText()).isEqualTo("vllm");
    assertThat(wire.path("engine").path("version").asText()).isEqualTo("0.11.0");
    assertThat(wire.path("engine").path("hashAlgo").asText()).isEqualTo("sha256_cbor");
    assertThat(wire.path("engine").path("blockSize").asInt()).isEqualTo(16);
    assertThat(wire.path("alignment").path("state").asText()).isEqualTo("unaligned");
    assertThat(wire.path("alignment").path("reason").asText()).startsWith("block size");
    assertThat(decode(with)).isEqualTo(with);
    assertThat(((ReplicaInfo) decode(with)).alignment().untrusted()).isTrue();

    ReplicaInfo plain = (ReplicaInfo) samples().get("ReplicaInfo");
    JsonNode plainWire = cbor.readTree(serialization.serialize(plain).get());
    assertThat(plainWire.has("engine")).as("an unknown engine is left out").isFalse();
    assertThat(plainWire.has("alignment")).as("an unchecked replica is left out").isFalse();
    ReplicaInfo back = (ReplicaInfo) decode(plain);
    assertThat(back.engine()).isEqualTo(EngineIdentity.NOTHING_KNOWN);
    assertThat(back.alignment()).isEqualTo(AlignmentStatus.UNCHECKED);
    assertThat(back.alignment().untrusted()).isFalse();
  }

  private static Object decode(Object message) {
    var serializer = serialization.findSerializerFor(message);
    return serialization
        .deserialize(
            serialization.serialize(message).get(),
            serializer.identifier(),
            Serializers.manifestFor(serializer, message))
        .get();
  }

  private static ObjectNode encode(Object message) {
    var serializer = serialization.findSerializerFor(message);
    ObjectNode n = JSON.createObjectNode();
    n.put("serializer", serializer.identifier());
    n.put("manifest", Serializers.manifestFor(serializer, message));
    n.put("hex", HexFormat.of().formatHex(serialization.serialize(message).get()));
    return n;
  }

  private static void write(Path file) throws Exception {
    ObjectNode all = JSON.createObjectNode();
    samples().forEach((name, message) -> all.set(name, encode(message)));
    Files.createDirectories(file.getParent());
    Files.writeString(file, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(all) + "\n");
  }
}
