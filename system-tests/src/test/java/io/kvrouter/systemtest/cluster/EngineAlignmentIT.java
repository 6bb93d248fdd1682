package io.kvrouter.systemtest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.typesafe.config.ConfigFactory;
import io.kvrouter.agent.AgentSettings;
import io.kvrouter.agent.ReplicaAgent;
import io.kvrouter.cli.RouterTokenizers;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.systemtest.engine.IndependentVllmEngine;
import io.kvrouter.testing.LoopbackHttp;
import java.time.Duration;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The alignment probe against an engine kvrouter did not write ({@link IndependentVllmEngine},
 * which tokenizes text as UTF-8 bytes offset by 3): an engine whose blocks the router would never
 * match is refused with an ERROR naming why, and an aligned one is served.
 */
class EngineAlignmentIT {

  private static final Duration HEARTBEAT = Duration.ofMillis(500);

  /** Runs the rig until the agent logged a verdict on the probe; returns the ERROR lines. */
  private static java.util.List<String> errors(
      IndependentVllmEngine.Config engine, int declaredBlockSize, UnaryOperator<AgentSettings> tune)
      throws Exception {
    Logger logger = (Logger) LoggerFactory.getLogger(ReplicaAgent.class);
    ListAppender<ILoggingEvent> log = new ListAppender<>();
    log.start();
    logger.addAppender(log);
    try (EngineRig rig = new EngineRig(engine, HEARTBEAT, 3, declaredBlockSize, tune)) {
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (log.list.stream().noneMatch(e -> e.getLevel() == Level.ERROR)
          && System.nanoTime() < deadline) {
        Thread.sleep(50); // polling the log of a bounded wait
      }
      assertThat(LoopbackHttp.getJson(rig.cluster.ingresses().get(0).url() + "/admin/replicas"))
          .as("a refused replica is not registered")
          .isEmpty();
      return log.list.stream()
          .filter(e -> e.getLevel() == Level.ERROR)
          .map(ILoggingEvent::getFormattedMessage)
          .toList();
    } finally {
      logger.detachAppender(log);
    }
  }

  @Test
  void engineWithAnotherBlockSize_isRefused_namingTheBlockSize() throws Exception {
    java.util.List<String> errors =
        errors(
            new IndependentVllmEngine.Config("kvrouter-demo", 32, 256, true, true),
            16,
            UnaryOperator.identity());
    assertThat(errors)
        .singleElement()
        .asString()
        .contains("NOT serving it", "block size: the engine stores blocks of 32 tokens");
  }

  @Test
  void engineThatTokenizesOtherwiseThanTheRouter_isRefused_namingTheTokenizer() throws Exception {
    try (TokenizerRegistry registry = TokenizerRegistry.fromConfig(ConfigFactory.load())) {
      java.util.List<String> errors =
          errors(
              new IndependentVllmEngine.Config("kvrouter-demo", 16, 256, true, true),
              16,
              s -> s.withTokenizers(RouterTokenizers.of(registry)));
      assertThat(errors).singleElement().asString().contains("NOT serving it", "tokenizer:");
    }
  }
}
