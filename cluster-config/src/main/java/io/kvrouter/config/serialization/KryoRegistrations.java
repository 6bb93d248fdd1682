package io.kvrouter.config.serialization;

import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.BlocksStored;
import io.kvrouter.protocol.CompactPrefillCompleted;
import io.kvrouter.protocol.CompactReleased;
import io.kvrouter.protocol.CompactReserved;
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
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The Kryo wire contract: every class that may cross the wire through {@link KryoSerializer}, each
 * with a fixed registration id.
 *
 * <p><b>Ids are append-only.</b> Nodes of two releases talk to each other during a rolling upgrade;
 * changing or reusing an id makes one of them read a different class than the other wrote. Add a
 * class with the next free id of its range and never remove a line: retire it by leaving the id
 * unused. {@code KryoRegistrationsTest} pins the table.
 *
 * <p>Ranges: 100–199 arrays and enums, 200–299 the event plane, 300–399 the reservation plane,
 * 400–499 agent control, 500–599 actor references, 600–699 tracker control, 700–799 strict-mode
 * gates, 800–849 traffic management (none used yet: session bindings and tenant usage are Pekko
 * Distributed Data, carried by its own serializers with CBOR values, and queue heads are CBOR; kept
 * for traffic messages that come to need Kryo), 900–949 prefill/decode and data parallel (none
 * registered yet: the role and the ranks travel in the CBOR {@code ReplicaInfo}, a data-parallel
 * rank is an ordinary routable target with its own event stream, and a disaggregated request is two
 * ordinary reservations), 1020–1039 tenant quota owners (each limited tenant's admissions decided
 * in sequence by one sharded entity), 1050–1059 the reservation plane's compact form (since 0.2.0;
 * the 300s hold its full form), 10000 and above extra registrations from configuration ({@code
 * kvrouter.serialization.kryo.extra-registrations}) for tests and plug-ins.
 */
public final class KryoRegistrations {

  /** Where ids given in configuration must start, so they never collide with built-ins. */
  public static final int FIRST_EXTRA_ID = 10_000;

  /** Registration id of every typed {@code ActorRef} implementation. */
  public static final int TYPED_ACTOR_REF_ID = 500;

  /** Registration id of every classic {@code ActorRef} implementation. */
  public static final int CLASSIC_ACTOR_REF_ID = 501;

  private static final Map<Class<?>, Integer> BUILT_IN = buildTable();

  private KryoRegistrations() {}

  private static Map<Class<?>, Integer> buildTable() {
    Map<Class<?>, Integer> t = new LinkedHashMap<>();
    t.put(long[].class, 100);
    t.put(int[].class, 101);
    t.put(String[].class, 102);
    t.put(KvEvent[].class, 103);
    t.put(Tier.class, 104);
    t.put(byte[].class, 105);
    t.put(KvEventBatch[].class, 106);

    t.put(KvEventBatch.class, 200);
    t.put(BlocksStored.class, 201);
    t.put(BlocksRemoved.class, 202);
    t.put(ReplicaCleared.class, 203);
    t.put(ReplicaLoad.class, 204);
    t.put(WindowBlocks.class, 205);

    t.put(Reserved.class, 300);
    t.put(PrefillCompleted.class, 301);
    t.put(Released.class, 302);
    t.put(ReservationEvent[].class, 303);
    t.put(ReplayReservations.class, 304);
    t.put(ReservationReplay.class, 305);
    t.put(ReservationMark.class, 306);

    t.put(GetInfo.class, 400);
    t.put(RequestReplay.class, 401);
    t.put(Replayed.class, 402);
    t.put(SnapshotReply.class, 403);
    t.put(ReplicaSnapshot.class, 404);

    t.put(GetTrackerView.class, 600);
    t.put(TrackerView.class, 601);
    t.put(TrackerView.ReplicaMark.class, 602);
    t.put(TrackerView.OriginMark.class, 603);
    t.put(TrackerView.ReplicaMark[].class, 604);
    t.put(TrackerView.OriginMark[].class, 605);
    t.put(TrackerReport.Accuracy.class, 690);
    t.put(TrackerReport.Accuracy[].class, 691);
    t.put(TrackerReport.class, 692);
    t.put(TrackerReport.Trim.class, 693);
    t.put(TrackerReport.Trim[].class, 694);
    t.put(GetTrackerReport.class, 695);

    t.put(GateCommand.Admit.class, 700);
    t.put(GateCommand.Leave.class, 701);
    t.put(GateCommand.Admission.class, 702);

    t.put(TenantQuotaCommand.Acquire.class, 1020);
    t.put(TenantQuotaCommand.Verdict.class, 1021);
    t.put(TenantQuotaCommand.Standing.class, 1022);

    t.put(CompactReserved.class, 1050);
    t.put(CompactPrefillCompleted.class, 1051);
    t.put(CompactReleased.class, 1052);

    t.put(RouteIntent.class, 1060);
    t.put(SharedTiming.class, 1061);
    return java.util.Collections.unmodifiableMap(t);
  }

  /** The built-in table, in id order; actor references are registered separately. */
  public static Map<Class<?>, Integer> builtIn() {
    return BUILT_IN;
  }
}
