package io.kvrouter.agent;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class EngineProbeApisTest {

  @Test
  void openApiPaths_sayWhichAgentApisTheEngineServes() {
    String doc =
        "{\"openapi\":\"3.1.0\",\"paths\":{\"/v1/chat/completions\":{},\"/v1/responses\":{},"
            + "\"/v1/messages\":{},\"/health\":{}}}";
    assertThat(EngineProbe.servedApis(doc)).containsExactly("/v1/messages", "/v1/responses");
  }

  @Test
  void noDocument_orNotJson_meansNoneOfThem() {
    assertThat(EngineProbe.servedApis("{\"detail\":\"Not Found\"}")).isEmpty();
    assertThat(EngineProbe.servedApis("<html>")).isEmpty();
  }

  @Test
  void modelListEntriesWithAParent_areTheEnginesLoraAdapters() {
    String list =
        "{\"object\":\"list\",\"data\":[{\"id\":\"base\",\"root\":\"/m\",\"parent\":null},"
            + "{\"id\":\"sql\",\"root\":\"/a/sql\",\"parent\":\"base\"},"
            + "{\"id\":\"chat\",\"root\":\"/a/chat\",\"parent\":\"base\"}]}";
    assertThat(EngineProbe.servedAdapters(list)).containsExactly("sql", "chat");
    assertThat(EngineProbe.servedAdapters("{\"data\":[{\"id\":\"base\"}]}")).isEmpty();
    assertThat(EngineProbe.servedAdapters("<html>")).isEmpty();
  }
}
