package io.kvrouter.cli;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The module map as rules over the main code of every module (this module sees them all): no
 * package imports one that imports it back, and the product never depends on the lab or the
 * simulator.
 */
class ArchitectureTest {

  private static JavaClasses main;

  @BeforeAll
  static void importMainClasses() {
    main =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.kvrouter");
  }

  /**
   * Each package is its own slice ({@code (**)} captures the whole name below {@code io.kvrouter}),
   * so two packages that import each other, or a package and its parent, form a cycle.
   */
  @Test
  void noPackageImportsOneThatImportsItBack() {
    ArchRule rule = slices().matching("io.kvrouter.(**)").should().beFreeOfCycles();
    rule.check(main);
  }

  @Test
  void productDependsOnNeitherLabNorSimulator() {
    ArchRule rule =
        noClasses()
            .that()
            .resideInAnyPackage(
                "io.kvrouter.protocol..",
                "io.kvrouter.config..",
                "io.kvrouter.tracker..",
                "io.kvrouter.agent..",
                "io.kvrouter.ingress..")
            .or()
            .resideInAPackage("io.kvrouter.cli")
            .should()
            .dependOnClassesThat()
            .resideInAnyPackage(
                "io.kvrouter.loadtest..", "io.kvrouter.sim..", "io.kvrouter.cli.dev..");
    rule.check(main);
  }
}
