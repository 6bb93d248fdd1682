package io.kvrouter.loadtest.lab;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.loadtest.workload.Workload;
import io.kvrouter.loadtest.workload.Workloads;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A replica killed in the middle of the conversation trace: its requests cut mid-answer, retried by
 * their clients or migrated, complete either way; a migration prefills the tokens generated before
 * the kill with the prompt and decodes none of them again, a retry decodes them all again.
 */
class LabKillsTest {

  @Test
  void requestsCutMidAnswer_migrated_prefillTheirGeneratedTokens_andDecodeNoneAgain() {
    Workload w = Workloads.bundled(Workloads.MOONCAKE_CONVERSATION, 0L).limit(600);
    LabConfig config =
        LabConfig.defaults(4).withPolicies(List.of("kvrouter")).withChaos(2, 0, 0, 0);

    List<LabKills.Summary> both =
        LabKills.compare(
            w,
            config,
            "kvrouter",
            w.get(200).arrivalMicros(),
            w.get(300).arrivalMicros() + 3_000_000,
            w.get(400).arrivalMicros());

    LabKills.Summary retry = both.get(0);
    LabKills.Summary migrated = both.get(1);
    assertThat(retry.mode()).isEqualTo(LabKills.OnKill.RETRY);
    assertThat(migrated.mode()).isEqualTo(LabKills.OnKill.MIGRATE);
    // The same requests are cut, with as many tokens generated, up to the kill in both runs.
    assertThat(migrated.requests()).isPositive().isEqualTo(retry.requests());
    assertThat(migrated.generatedBeforeKill()).isPositive().isEqualTo(retry.generatedBeforeKill());
    // A migration asks for the tokens left, a retry for the whole answer again.
    assertThat(migrated.askedAfterKill() + migrated.generatedBeforeKill())
        .isEqualTo(retry.askedAfterKill());
    assertThat(retry.decodedAgain()).isEqualTo(retry.generatedBeforeKill());
    assertThat(migrated.decodedAgain()).isZero();
    // Every token generated before the kill is prefilled again (no live replica holds any), so
    // the migration prefills at least those more than the retry's uncached prompts.
    assertThat(migrated.prefillTokens()).isGreaterThanOrEqualTo(migrated.generatedBeforeKill());
    assertThat(migrated.nextToken().p50()).isLessThan(retry.nextToken().p50());
    assertThat(migrated.finish().p50()).isLessThan(retry.finish().p50());
    System.out.print(LabKills.markdown(both));
  }
}
