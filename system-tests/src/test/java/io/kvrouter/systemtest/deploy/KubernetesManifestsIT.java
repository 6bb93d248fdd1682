package io.kvrouter.systemtest.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.systemtest.testing.ExternalProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The Kubernetes manifests ({@code deploy/kubernetes/}), checked offline: the committed renderings
 * are what the Kustomize overlays render now, and every rendered object validates against its
 * schema (node {@code deploy/kubernetes/validate/validate.mjs}: kubernetes-models and the CRDs'
 * published schemas) with zero errors.
 *
 * <p>Needs {@code kubectl} with Kustomize v5 (the machine image's google-cloud-cli kubectl 1.32
 * bundles v5.5.0; Debian's kubernetes-client 1.20 bundles Kustomize v2, which cannot render
 * components) and Node with npm.
 */
class KubernetesManifestsIT {

  static Path deploy() {
    Path dir = Path.of(System.getProperty("user.dir")).resolve("../deploy/kubernetes").normalize();
    assertThat(dir.resolve("base/kustomization.yaml")).exists();
    return dir;
  }

  @Test
  void committedRenderings_equalWhatTheOverlaysRenderNow() throws Exception {
    Path deploy = deploy();
    String version =
        ExternalProcess.run(deploy, List.of("kubectl", "version", "--client"), Map.of(), 60);
    assertThat(version).as("kubectl with Kustomize v5").containsPattern("Kustomize Version: v5");
    List<Path> overlays;
    try (Stream<Path> s = Files.list(deploy.resolve("overlays"))) {
      overlays = s.filter(Files::isDirectory).sorted().toList();
    }
    assertThat(overlays).isNotEmpty();
    for (Path overlay : overlays) {
      String name = overlay.getFileName().toString();
      Path out = Files.createTempFile("kvrouter-" + name, ".yaml");
      ExternalProcess.run(
          deploy,
          List.of("bash", "-c", "kubectl kustomize overlays/" + name + " > " + out),
          Map.of(),
          120);
      assertThat(Files.readString(out))
          .as("rendered/%s.yaml is stale: run deploy/kubernetes/render.sh and commit", name)
          .isEqualTo(Files.readString(deploy.resolve("rendered/" + name + ".yaml")));
    }
  }

  @Test
  void everyRenderedObject_validatesAgainstItsSchema() throws Exception {
    Path validate = deploy().resolve("validate");
    if (!Files.isDirectory(validate.resolve("node_modules/kubernetes-models"))) {
      ExternalProcess.run(validate, List.of("npm", "ci", "--no-audit", "--no-fund"), Map.of(), 300);
    }
    String out = ExternalProcess.run(validate, List.of("node", "validate.mjs"), Map.of(), 120);
    System.out.println(out);
    assertThat(out).contains(" 0 failed").containsPattern("[1-9][0-9]* passed");
    assertThat(out).contains("InferencePool", "ServiceMonitor", "HorizontalPodAutoscaler");
  }

  @Test
  void grafanaDashboardInTheManifests_isTheOneInDeployGrafana() throws Exception {
    Path deploy = deploy();
    assertThat(Files.readString(deploy.resolve("components/monitoring/kvrouter-dashboard.json")))
        .as("copy deploy/grafana/dashboards/kvrouter.json to components/monitoring/")
        .isEqualTo(Files.readString(deploy.resolve("../grafana/dashboards/kvrouter.json")));
  }
}
