package io.kvrouter.systemtest.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvrouter.systemtest.testing.ExternalProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The Kubernetes manifests ({@code deploy/kubernetes/}), checked offline: the committed renderings
 * are what the Kustomize overlays render now, and every rendered object validates against its
 * schema (node {@code deploy/kubernetes/validate/validate.mjs}: kubernetes-models and the CRDs'
 * published schemas) with zero errors; the guide (docs/deployment.md, Kubernetes) looks in the
 * namespaces the overlays create and sets the images where they reach every kvrouter container.
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
    for (String name : overlays(deploy)) {
      assertThat(render(deploy, name))
          .as("rendered/%s.yaml is stale: run deploy/kubernetes/render.sh and commit", name)
          .isEqualTo(Files.readString(deploy.resolve("rendered/" + name + ".yaml")));
    }
  }

  @Test
  void everyNamespaceTheGuideLooksIn_isOneAnOverlayCreatesAndDeploysInto() throws Exception {
    Path deploy = deploy();
    Map<String, String> created = new TreeMap<>();
    for (String name : overlays(deploy)) {
      List<String> objects =
          objects(Files.readString(deploy.resolve("rendered/" + name + ".yaml")));
      List<String> namespaces =
          objects.stream()
              .filter(o -> o.contains("\nkind: Namespace\n"))
              .map(o -> field(o, "name"))
              .toList();
      assertThat(namespaces).as("rendered/%s.yaml creates its namespace", name).hasSize(1);
      String namespace = namespaces.get(0);
      for (String object : objects) {
        String in = field(object, "namespace");
        assertThat(in == null || in.equals(namespace))
            .as("rendered/%s.yaml: every object in %s, not %s", name, namespace, in)
            .isTrue();
      }
      created.put(name, namespace);
    }
    Set<String> looked = new TreeSet<>();
    Matcher m =
        Pattern.compile("`kubectl [^`]*?(?:-n|--namespace)[ =]([a-z0-9.-]+)[^`]*`")
            .matcher(guide(deploy));
    while (m.find()) {
      looked.add(m.group(1));
    }
    assertThat(looked).as("namespaces the guide's kubectl commands name").isNotEmpty();
    assertThat(created.values()).as("the overlays' namespaces, %s", created).containsAll(looked);
    assertThat(looked)
        .as("the guide checks every overlay's namespace, %s", created)
        .containsAll(created.values());
  }

  @Test
  void imagesSetWhereTheGuideSays_reachEveryKvrouterContainerOfEveryOverlay() throws Exception {
    Path deploy = deploy();
    Matcher where =
        Pattern.compile("\\*\\*Point the manifests at it\\*\\*: `images:` in `([^`]+)`")
            .matcher(guide(deploy));
    assertThat(where.find()).as("the guide's step 'Point the manifests at it'").isTrue();
    Path copy = Files.createTempDirectory("kvrouter-kustomize");
    ExternalProcess.run(
        deploy, List.of("bash", "-c", "cp -r base components overlays " + copy), Map.of(), 60);
    Path kustomization = copy.resolve(where.group(1).replaceFirst("^deploy/kubernetes/", ""));
    assertThat(kustomization).exists();
    Files.writeString(
        kustomization,
        withoutImages(Files.readString(kustomization))
            + "images:\n"
            + "  - name: kvrouter\n    newName: registry.test/kvrouter\n    newTag: 9.9.9\n"
            + "  - name: kvrouter-dev\n    newName: registry.test/kvrouter-dev\n    newTag: 9.9.9\n");
    Set<String> seen = new TreeSet<>();
    for (String name : overlays(deploy)) {
      Matcher image = Pattern.compile("\n\\s+image: (\\S+)").matcher(render(copy, name));
      while (image.find()) {
        String ref = image.group(1);
        seen.add(ref);
        assertThat(ref.startsWith("vllm/") || ref.startsWith("registry.test/"))
            .as("overlays/%s: %s is vLLM's or the one set in %s", name, ref, where.group(1))
            .isTrue();
      }
    }
    assertThat(seen).contains("registry.test/kvrouter:9.9.9", "registry.test/kvrouter-dev:9.9.9");
  }

  private static List<String> overlays(Path deploy) throws Exception {
    try (Stream<Path> s = Files.list(deploy.resolve("overlays"))) {
      List<String> names =
          s.filter(Files::isDirectory).map(p -> p.getFileName().toString()).sorted().toList();
      assertThat(names).isNotEmpty();
      return names;
    }
  }

  private static String render(Path kustomizeRoot, String overlay) throws Exception {
    Path out = Files.createTempFile("kvrouter-" + overlay, ".yaml");
    ExternalProcess.run(
        kustomizeRoot,
        List.of("bash", "-c", "kubectl kustomize overlays/" + overlay + " > " + out),
        Map.of(),
        120);
    return Files.readString(out);
  }

  /** The Kubernetes section of docs/deployment.md and deploy/kubernetes/README.md. */
  private static String guide(Path deploy) throws Exception {
    String deployment = Files.readString(deploy.resolve("../../docs/deployment.md"));
    int start = deployment.indexOf("\n## Kubernetes\n");
    assertThat(start).as("docs/deployment.md has a Kubernetes section").isNotNegative();
    int end = deployment.indexOf("\n## ", start + 1);
    return deployment.substring(start, end < 0 ? deployment.length() : end)
        + Files.readString(deploy.resolve("README.md"));
  }

  private static List<String> objects(String rendered) {
    List<String> objects = new ArrayList<>();
    for (String object : ("\n" + rendered).split("\n---\n")) {
      objects.add(object.startsWith("\n") ? object : "\n" + object);
    }
    return objects;
  }

  /** A field of an object's top-level metadata (two-space indent), or null. */
  private static String field(String object, String name) {
    Matcher m = Pattern.compile("\nmetadata:\n(?:  .*\n)*?  " + name + ": (\\S+)").matcher(object);
    return m.find() ? m.group(1) : null;
  }

  /** A kustomization without its top-level images field. */
  private static String withoutImages(String kustomization) {
    return Pattern.compile("(?m)^images:\n(?:[ -].*\n?)*")
            .matcher(kustomization)
            .replaceAll("")
            .stripTrailing()
        + "\n";
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
