package io.kvrouter.ingress.traffic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.ConfigFactory;
import io.kvrouter.ingress.api.ApiException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TenantRegistryTest {

  static TrafficSettings.Tenants settings(String file, String anonymous, String inline) {
    return new TrafficSettings.Tenants(
        file, Duration.ofSeconds(10), anonymous, ConfigFactory.parseString(inline));
  }

  static int status(Runnable r) {
    try {
      r.run();
      return 200;
    } catch (ApiException e) {
      return e.error().status();
    }
  }

  @Test
  void withoutTenants_everybodyIsTheDefaultTenant_andNoKeyIsAsked() {
    TenantRegistry r = TenantRegistry.fromSettings(settings("", "", ""));
    assertThat(r.enabled()).isFalse();
    assertThat(r.authenticate(null)).isEqualTo(Tenant.DEFAULT);
    assertThat(r.authenticate("anything")).isEqualTo(Tenant.DEFAULT);
  }

  @Test
  void keysMapToTenants_plainOrAsSha256_andOthersGet401() {
    String digest = TenantRegistry.sha256("sk-beta");
    TenantRegistry r =
        TenantRegistry.fromSettings(
            settings(
                "",
                "",
                "acme { keys = [sk-acme], requests-per-minute = 60, weight = 2, priority = 5 }\n"
                    + "beta { keys = [\"sha256:"
                    + digest.toUpperCase()
                    + "\"] }"));
    Tenant acme = r.authenticate("sk-acme");
    assertThat(acme).isEqualTo(new Tenant("acme", 60, 0, 2, 5));
    assertThat(r.authenticate("sk-beta").id()).isEqualTo("beta");
    assertThat(status(() -> r.authenticate("sk-nope"))).isEqualTo(401);
    assertThat(status(() -> r.authenticate(null))).isEqualTo(401);
    ApiException e =
        (ApiException)
            org.assertj.core.api.Assertions.catchThrowable(() -> r.authenticate("sk-secret-key"));
    assertThat(e.error().code()).isEqualTo("invalid_api_key");
    assertThat(e.error().message()).contains("sk-***key").doesNotContain("secret");
  }

  @Test
  void theAnonymousTenant_takesRequestsWithoutKey_butNotWrongKeys() {
    TenantRegistry r =
        TenantRegistry.fromSettings(settings("", "free", "free { requests-per-minute = 5 }"));
    assertThat(r.authenticate(null).id()).isEqualTo("free");
    assertThat(status(() -> r.authenticate("sk-wrong"))).isEqualTo(401);
  }

  @Test
  void aKeyOfTwoTenants_orAnUnknownAnonymousTenant_isAConfigurationError() {
    assertThatThrownBy(
            () ->
                TenantRegistry.fromSettings(settings("", "", "a { keys = [k] }\nb { keys = [k] }")))
        .hasMessageContaining("two tenants");
    assertThatThrownBy(() -> TenantRegistry.fromSettings(settings("", "ghost", "a { keys = [k] }")))
        .hasMessageContaining("ghost");
  }

  @Test
  void theFile_isReadAgainWhenItChanges_andABrokenFileKeepsTheTenantsThatWere(@TempDir Path dir)
      throws Exception {
    Path file = dir.resolve("tenants.conf");
    Files.writeString(file, "tenants { acme { keys = [sk-1], requests-per-minute = 10 } }");
    TenantRegistry r = TenantRegistry.fromSettings(settings(file.toString(), "", ""));
    assertThat(r.authenticate("sk-1").requestsPerMinute()).isEqualTo(10);

    Files.writeString(
        file,
        "tenants { acme { keys = [sk-2], requests-per-minute = 20 }, beta { keys = [sk-3] } }");
    Files.setLastModifiedTime(file, FileTime.fromMillis(System.currentTimeMillis() + 5_000));
    r.reloadIfChanged();
    assertThat(r.authenticate("sk-2").requestsPerMinute()).isEqualTo(20);
    assertThat(r.authenticate("sk-3").id()).isEqualTo("beta");
    assertThat(status(() -> r.authenticate("sk-1"))).as("old key revoked").isEqualTo(401);

    Files.writeString(file, "tenants { acme { keys = [sk-2 ");
    Files.setLastModifiedTime(file, FileTime.fromMillis(System.currentTimeMillis() + 10_000));
    r.reloadIfChanged();
    assertThat(r.authenticate("sk-2").id()).as("broken file ignored").isEqualTo("acme");
    assertThatThrownBy(r::reload).isInstanceOf(IllegalArgumentException.class);
    assertThat(r.tenants()).containsKeys("acme", "beta");
  }
}
