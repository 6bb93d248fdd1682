package io.kvrouter.ingress.tokenize;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.LegacyOverrides;
import com.hubspot.jinjava.el.JinjavaInterpreterResolver;
import com.hubspot.jinjava.lib.fn.ELFunctionDefinition;
import jinjava.javax.el.CompositeELResolver;

/**
 * Builds a jinjava engine configured the way Hugging Face transformers configures jinja2 for chat
 * templates ({@code ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
 * extensions=[loopcontrols])}, see {@code transformers.utils.chat_template_utils}), plus the Python
 * compatibility layer: {@link PythonMethodResolver} for {@code str} methods, {@link
 * PythonToJsonFilter} for {@code tojson}, {@link TemplateFunctions} for {@code raise_exception},
 * {@code strftime_now} and slices. Template sources must also pass through {@link
 * JinjaSourceRewriter}.
 *
 * <p>jinjava needs {@code LegacyOverrides.withUseTrimmingForNotesAndExpressions(true)} so that
 * <code>{{-</code> and <code>-}}</code> trim whitespace as in jinja2.
 *
 * <p>One engine serves all templates and threads: jinjava creates a fresh interpreter per render.
 * Building an engine costs a few milliseconds; do it once.
 */
final class HfJinjava {

  /** Upper bound on one rendering, far above any prompt a model accepts. */
  private static final long MAX_OUTPUT_CHARS = 64L * 1024 * 1024;

  private HfJinjava() {}

  /** Returns a new engine with the compatibility layer installed. */
  static Jinjava create() {
    CompositeELResolver resolver = new CompositeELResolver();
    resolver.add(new PythonMethodResolver());
    resolver.add(JinjavaInterpreterResolver.DEFAULT_RESOLVER_READ_ONLY);
    JinjavaConfig config =
        JinjavaConfig.newBuilder()
            .withTrimBlocks(true)
            .withLstripBlocks(true)
            .withLegacyOverrides(
                LegacyOverrides.newBuilder().withUseTrimmingForNotesAndExpressions(true).build())
            .withElResolver(resolver)
            .withMaxOutputSize(MAX_OUTPUT_CHARS)
            .build();
    Jinjava jinjava = new Jinjava(config);
    jinjava.getGlobalContext().registerFilter(new PythonToJsonFilter());
    try {
      jinjava
          .getGlobalContext()
          .registerFunction(
              new ELFunctionDefinition(
                  "", "raise_exception", TemplateFunctions.class, "raiseException", Object.class));
      jinjava
          .getGlobalContext()
          .registerFunction(
              new ELFunctionDefinition(
                  "", "strftime_now", TemplateFunctions.class, "strftimeNow", Object.class));
      jinjava
          .getGlobalContext()
          .registerFunction(
              new ELFunctionDefinition(
                  "",
                  "py_slice",
                  TemplateFunctions.class,
                  "pySlice",
                  Object.class,
                  Object.class,
                  Object.class,
                  Object.class));
    } catch (RuntimeException e) {
      throw new IllegalStateException("cannot register template functions", e);
    }
    return jinjava;
  }
}
