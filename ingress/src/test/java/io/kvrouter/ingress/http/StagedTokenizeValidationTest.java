package io.kvrouter.ingress.http;

import java.util.List;
import org.junit.jupiter.api.BeforeAll;

/**
 * The validation table again with every body past {@code inline-max-bytes}, so each chat request
 * takes the staged path (rendered and looked up on the HTTP thread, tokenized where the cache's
 * miss puts it): the same errors, no decision, nothing at a replica.
 */
class StagedTokenizeValidationTest extends ValidationTableTest {

  @BeforeAll
  static void start() throws Exception {
    ingress = new ValidatingIngress(64, "8k", List.of(), "tokenize.inline-max-bytes = 0");
    router = ingress.router;
    engine = ingress.engine;
  }
}
