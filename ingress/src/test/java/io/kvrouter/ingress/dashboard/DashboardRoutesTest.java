package io.kvrouter.ingress.dashboard;

import static io.kvrouter.testing.LoopbackHttp.get;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.ConfigFactory;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The dashboard routes on a one-node cluster, over real loopback HTTP. */
class DashboardRoutesTest {

  static final ObjectMapper JSON = new ObjectMapper();
  static ActorTestKit kit;
  static String open;
  static String locked;

  @BeforeAll
  static void start() throws Exception {
    kit =
        ActorTestKit.create(
            "kvrouter",
            ConfigFactory.parseString(
                    "pekko.actor.provider = cluster\n"
                        + "pekko.remote.artery.canonical { hostname = 127.0.0.1, port = 0 }\n"
                        + "pekko.cluster.roles = [ingress]\n"
                        + "pekko.cluster.jmx.multi-mbeans-in-same-jvm = on")
                .withFallback(ConfigFactory.load()));
    Cluster cluster = Cluster.get(kit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    kit.createTestProbe()
        .awaitAssert(
            Duration.ofSeconds(20),
            () -> {
              assertThat(cluster.selfMember().status()).isEqualTo(MemberStatus.up());
              return null;
            });
    open = bind(new DashboardRoutes("", JSON));
    locked = bind(new DashboardRoutes("s3cret", JSON));
  }

  static String bind(DashboardRoutes routes) throws Exception {
    ServerBinding b =
        Http.get(kit.system())
            .newServerAt("127.0.0.1", 0)
            .bind(routes.routes())
            .toCompletableFuture()
            .get();
    return "http://127.0.0.1:" + b.localAddress().getPort();
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  @Test
  void page_andEveryAssetItReferences_areServedFromTheJar_withNoExternalUrls() throws Exception {
    for (String path : List.of("/dashboard", "/dashboard/")) {
      HttpResponse<String> page = get(open + path);
      assertThat(page.statusCode()).isEqualTo(200);
      assertThat(page.headers().firstValue("content-type"))
          .hasValueSatisfying(v -> assertThat(v).startsWith("text/html"));
      assertThat(page.body()).contains("id=\"matrix-replicas\"").contains("id=\"overall\"");
    }
    String html = get(open + "/dashboard").body();
    Matcher m = Pattern.compile("(?:src|href)=\"([^\"]+)\"").matcher(html);
    List<String> assets = new ArrayList<>();
    while (m.find()) {
      assets.add(m.group(1));
    }
    assertThat(assets)
        .contains(
            "/dashboard/dashboard.js",
            "/dashboard/charts.js",
            "/dashboard/prom.js",
            "/dashboard/dashboard.css");
    for (String asset : assets) {
      assertThat(asset).as("no CDN, no internet").startsWith("/dashboard/");
      HttpResponse<String> r = get(open + asset);
      assertThat(r.statusCode()).as(asset).isEqualTo(200);
      assertThat(r.body())
          .as("%s has no absolute URLs", asset)
          .doesNotContainPattern("https?://(?!www\\.w3\\.org/2000/svg)");
      String type = r.headers().firstValue("content-type").orElse("");
      assertThat(type).as(asset).contains(asset.endsWith(".css") ? "text/css" : "javascript");
    }
  }

  @Test
  void unknownFile_isRejected_soTheIngressNotFoundAnswers() throws Exception {
    assertThat(get(open + "/dashboard/no-such-file.js").statusCode()).isEqualTo(404);
  }

  @Test
  void clusterJson_listsThisNode_asAnUpIngressMember() throws Exception {
    HttpResponse<String> r = get(open + "/dashboard/cluster.json");
    assertThat(r.statusCode()).isEqualTo(200);
    JsonNode body = JSON.readTree(r.body());
    String self = Cluster.get(kit.system()).selfMember().address().toString();
    assertThat(body.path("cluster").asBoolean()).isTrue();
    assertThat(body.path("self").asText()).isEqualTo(self);
    JsonNode member = body.path("members").get(0);
    assertThat(body.path("members")).hasSize(1);
    assertThat(member.path("address").asText()).isEqualTo(self);
    assertThat(member.path("status").asText()).isEqualTo("Up");
    assertThat(member.path("reachable").asBoolean()).isTrue();
    assertThat(member.path("self").asBoolean()).isTrue();
    assertThat(member.path("roles").toString()).isEqualTo("[\"ingress\"]");
  }

  @Test
  void clusterJson_requiresTheAdminToken_whenOneIsConfigured_butThePageDoesNot() throws Exception {
    assertThat(get(locked + "/dashboard/cluster.json").statusCode()).isEqualTo(401);
    assertThat(
            get(locked + "/dashboard/cluster.json", "Authorization", "Bearer wrong").statusCode())
        .isEqualTo(401);
    assertThat(
            get(locked + "/dashboard/cluster.json", "Authorization", "Bearer s3cret").statusCode())
        .isEqualTo(200);
    assertThat(get(locked + "/dashboard").statusCode()).isEqualTo(200);
  }
}
