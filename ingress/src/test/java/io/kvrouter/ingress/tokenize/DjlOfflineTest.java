package io.kvrouter.ingress.tokenize;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.net.ProxySelector;
import java.net.SocketAddress;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
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

  /**
   * The registry sets offline mode when its class is initialised. Surefire sets the property too
   * and this JVM initialised the class long ago, so the test clears the property and initialises
   * the class again in a class loader of its own.
   */
  @Test
  void registryClassInit_setsOfflineMode() throws Exception {
    String offline = System.getProperty(DjlOffline.OFFLINE_PROPERTY);
    System.clearProperty(DjlOffline.OFFLINE_PROPERTY);
    URL classes = TokenizerRegistry.class.getProtectionDomain().getCodeSource().getLocation();
    try (URLClassLoader fresh =
        new URLClassLoader(new URL[] {classes}, TokenizerRegistry.class.getClassLoader()) {
          @Override
          protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.startsWith(TokenizerRegistry.class.getPackageName())) {
              return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
              Class<?> c = findLoadedClass(name);
              return c != null ? c : findClass(name); // this package: child first
            }
          }
        }) {
      Class<?> registry = Class.forName(TokenizerRegistry.class.getName(), false, fresh);
      assertThat(registry).isNotSameAs(TokenizerRegistry.class);
      assertThat(System.getProperty(DjlOffline.OFFLINE_PROPERTY)).as("before init").isNull();
      Class.forName(registry.getName(), true, fresh);
      assertThat(System.getProperty(DjlOffline.OFFLINE_PROPERTY)).isEqualTo("true");
    } finally {
      if (offline != null) {
        System.setProperty(DjlOffline.OFFLINE_PROPERTY, offline);
      }
    }
  }
}
