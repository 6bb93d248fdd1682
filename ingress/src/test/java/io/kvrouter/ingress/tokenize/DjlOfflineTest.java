package io.kvrouter.ingress.tokenize;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.net.ProxySelector;
import java.net.SocketAddress;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * DJL must never reach the network. It calls home synchronously inside {@code
 * HuggingFaceTokenizer.newInstance} (through {@code HttpURLConnection}, which consults the default
 * {@link ProxySelector} first) unless offline mode is on; a recording selector therefore sees any
 * attempt, and points it at a closed local port so nothing leaves the machine.
 */
class DjlOfflineTest {

  private static final class RecordingSelector extends ProxySelector {
    final List<URI> seen = new CopyOnWriteArrayList<>();

    @Override
    public List<Proxy> select(URI uri) {
      seen.add(uri);
      return List.of(new Proxy(Proxy.Type.HTTP, new InetSocketAddress("127.0.0.1", 9)));
    }

    @Override
    public void connectFailed(URI uri, SocketAddress sa, IOException ioe) {
      // Expected for any attempt; the attempt itself is what the test records.
    }
  }

  @Test
  void loadingAndEncoding_neverTouchesTheNetwork_andLeavesOfflineModeOn() {
    ProxySelector previous = ProxySelector.getDefault();
    RecordingSelector recorder = new RecordingSelector();
    String offline = System.getProperty(DjlOffline.OFFLINE_PROPERTY);
    ProxySelector.setDefault(recorder);
    try {
      System.clearProperty(DjlOffline.OFFLINE_PROPERTY);
      try (HfPromptTokenizer t = HfPromptTokenizer.load(Qwen3Files.tokenizerJson())) {
        assertThat(t.encode("offline please", true)).isNotEmpty();
      }
      assertThat(System.getProperty(DjlOffline.OFFLINE_PROPERTY)).isEqualTo("true");
      assertThat(System.getProperty(DjlOffline.TRACKING_PROPERTY)).isEqualTo("true");
      assertThat(ai.djl.util.Utils.isOfflineMode()).isTrue();
      assertThat(recorder.seen).isEmpty();
    } finally {
      ProxySelector.setDefault(previous);
      if (offline != null) {
        System.setProperty(DjlOffline.OFFLINE_PROPERTY, offline);
      }
    }
  }

  @Test
  void registryClassInit_setsOfflineMode() {
    assertThat(TokenizerRegistry.DEMO_MODEL).isNotEmpty();
    TokenizerRegistry.fromSettings(List.of()).close();
    assertThat(System.getProperty(DjlOffline.OFFLINE_PROPERTY)).isEqualTo("true");
  }
}
