package io.kvrouter.agent;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ServingGateTest {

  private final ServingGate gate = new ServingGate(true, true, true, 3);

  /** A healthy check, settled by the subscriber, and a passed probe: registered. */
  private void serving() {
    long t = gate.nextTick();
    assertThat(gate.checked(t, true)).isEqualTo(ServingGate.Steps.NONE);
    assertThat(gate.settled(t).probe()).isTrue();
    ServingGate.Steps probed = gate.probed(gate.probeGeneration(), false);
    assertThat(probed.register()).as("not before the engine said which APIs it serves").isFalse();
    assertThat(probed.learnApis()).isTrue();
    assertThat(gate.apisLearned(true).register()).isTrue();
    assertThat(gate.registered()).isTrue();
  }

  @Test
  void aReplicaIsRegistered_onlyOnceHealthy_settled_andProbed() {
    assertThat(gate.mayPublish()).as("nothing settled yet").isFalse();
    serving();
    assertThat(gate.mayPublish()).isTrue();
  }

  @Test
  void afterAFailedCheck_nothingIsPublishedOrRegistered_untilALaterCheckIsSettled() {
    serving();
    long lost = gate.nextTick();
    ServingGate.Steps steps = gate.checked(lost, false);
    assertThat(steps.tellHealthLost()).isTrue();
    assertThat(gate.mayPublish()).isFalse();
    for (int i = 0; i < 2; i++) {
      assertThat(gate.checked(gate.nextTick(), false).tellHealthLost()).isFalse();
    }
    assertThat(gate.registered()).as("deregistered after 3 failures").isFalse();

    long back = gate.nextTick();
    assertThat(gate.checked(back, true)).isEqualTo(ServingGate.Steps.NONE);
    assertThat(gate.settled(lost))
        .as("a verdict for a check before the loss settles nothing")
        .isEqualTo(ServingGate.Steps.NONE);
    assertThat(gate.current(lost)).as("a scrape sent before the loss is stale").isFalse();
    assertThat(gate.current(back)).isTrue();
    assertThat(gate.mayPublish()).isFalse();

    ServingGate.Steps settled = gate.settled(back);
    assertThat(settled.learnApis()).as("the same engine, still aligned").isTrue();
    assertThat(gate.apisLearned(false))
        .as("no answer: asked again")
        .isEqualTo(ServingGate.Steps.NONE);
    assertThat(gate.checked(gate.nextTick(), true).learnApis()).isTrue();
    assertThat(gate.apisLearned(true).register()).isTrue();
    assertThat(gate.mayPublish()).isTrue();
  }

  @Test
  void aRestartedEngine_isProbedAgain_andRefusedOnAMismatch_andAStaleProbeIsIgnored() {
    serving();
    long stale = gate.probeGeneration();
    ServingGate.Steps restarted = gate.restarted();
    assertThat(restarted.probe()).isTrue();
    assertThat(gate.probed(stale, true)).isEqualTo(ServingGate.Steps.NONE);
    assertThat(gate.registered()).isTrue();

    ServingGate.Steps refused = gate.probed(gate.probeGeneration(), true);
    assertThat(refused.deregister()).isTrue();
    assertThat(gate.registered()).isFalse();
    assertThat(gate.checked(gate.nextTick(), true).register())
        .as("a refused replica stays out until the engine restarts")
        .isFalse();
  }

  @Test
  void aMismatchIsServedAnyway_whenTheAgentOnlyWarns() {
    ServingGate warn = new ServingGate(true, true, false, 3);
    long t = warn.nextTick();
    warn.checked(t, true);
    warn.settled(t);
    assertThat(warn.probed(warn.probeGeneration(), true).learnApis()).isTrue();
    assertThat(warn.apisLearned(true).register()).isTrue();
  }

  @Test
  void inApproximateMode_aHealthyCheckRegisters_withoutSettlingOrProbing() {
    ServingGate approximate = new ServingGate(false, false, true, 2);
    assertThat(approximate.mayPublish()).isTrue();
    ServingGate.Steps first = approximate.checked(approximate.nextTick(), true);
    assertThat(first.learnApis()).isTrue();
    assertThat(first.probe()).isFalse();
    assertThat(approximate.apisLearned(true).register()).isTrue();
    assertThat(approximate.checked(approximate.nextTick(), false).tellHealthLost()).isFalse();
    assertThat(approximate.checked(approximate.nextTick(), false).deregister()).isTrue();
  }

  /**
   * Checks overlap (one a second, each waiting up to the probe timeout): a check that timed out on
   * a stall but came back after a later healthy one neither interrupts the engine nor counts
   * towards deregistering it, and a healthy answer overtaken by a later failure does not clear that
   * failure.
   */
  @Test
  void anAnswerOvertakenByALaterCheck_isIgnored() {
    serving();
    long stuck = gate.nextTick();
    long later = gate.nextTick();
    assertThat(gate.checked(later, true)).isEqualTo(ServingGate.Steps.NONE);
    assertThat(gate.checked(stuck, false)).isEqualTo(ServingGate.Steps.NONE);
    assertThat(gate.mayPublish()).as("no interruption from a stale timeout").isTrue();

    long slow = gate.nextTick();
    long first = gate.nextTick();
    assertThat(gate.checked(first, false).tellHealthLost()).isTrue();
    assertThat(gate.checked(slow, true)).isEqualTo(ServingGate.Steps.NONE);
    assertThat(gate.checked(gate.nextTick(), false).deregister()).isFalse();
    assertThat(gate.checked(gate.nextTick(), false).deregister())
        .as("three failures in a row: the stale success between them did not reset the count")
        .isTrue();
  }

  @Test
  void aDrainingNode_deregistersForGood() {
    serving();
    assertThat(gate.drain().deregister()).isTrue();
    assertThat(gate.registered()).isFalse();
    long t = gate.nextTick();
    assertThat(gate.checked(t, true)).isEqualTo(ServingGate.Steps.NONE);
    assertThat(gate.apisLearned(true)).isEqualTo(ServingGate.Steps.NONE);
  }
}
