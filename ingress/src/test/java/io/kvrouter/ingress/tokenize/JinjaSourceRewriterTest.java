package io.kvrouter.ingress.tokenize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class JinjaSourceRewriterTest {

  @Test
  void reverseSlice_becomesPySliceCall() {
    assertThat(JinjaSourceRewriter.rewrite("{% for m in messages[::-1] %}"))
        .isEqualTo("{% for m in py_slice(messages, null, null, -1) %}");
  }

  @Test
  void sliceOfAttributeChainAndCall_wrapsTheWholeOperand() {
    assertThat(JinjaSourceRewriter.rewrite("{{ a.b(1)[0].c[1:n - 1] }}"))
        .isEqualTo("{{ py_slice(a.b(1)[0].c, 1, n - 1, null) }}");
  }

  @Test
  void chainedSlices_nest() {
    assertThat(JinjaSourceRewriter.rewrite("{{ xs[1:][::-1] }}"))
        .isEqualTo("{{ py_slice(py_slice(xs, 1, null, null), null, null, -1) }}");
  }

  @Test
  void plainSubscriptsListLiteralsAndDicts_stayAsTheyAre() {
    String src = "{{ xs[0] }}{{ xs[-1] }}{% set d = {'a': [1, 2]} %}{{ [1, 2][0] }}{{ d['a'] }}";
    assertThat(JinjaSourceRewriter.rewrite(src)).isEqualTo(src);
  }

  @Test
  void keywordArgumentValue_isParenthesizedWhole() {
    assertThat(
            JinjaSourceRewriter.rewrite(
                "{% set ns = namespace(flag=true, last=messages|length - 1) %}"))
        .isEqualTo("{% set ns = namespace(flag=(true), last=(messages|length - 1)) %}");
  }

  @Test
  void comparisonsAndAssignments_areNotKeywordArguments() {
    String src = "{% set x = f(a == b, c != d, e <= g) %}{% if x >= 1 %}{% endif %}";
    assertThat(JinjaSourceRewriter.rewrite(src)).isEqualTo(src);
  }

  @Test
  void textCommentsStringsRawAndMacroSignatures_areUntouched() {
    String src =
        "text [::-1] f(a=b - 1)\n{# xs[::-1] #}{{ 'xs[::-1] f(a=1)' }}"
            + "{% raw %}{{ xs[::-1] }}{% endraw %}{% macro m(a=1 + 2) %}{% endmacro %}";
    assertThat(JinjaSourceRewriter.rewrite(src)).isEqualTo(src);
  }

  @Test
  void whitespaceControlMarkers_arePreserved() {
    assertThat(JinjaSourceRewriter.rewrite("{%- for m in ms[::-1] -%}{{- m -}}{%- endfor %}"))
        .isEqualTo("{%- for m in py_slice(ms, null, null, -1) -%}{{- m -}}{%- endfor %}");
  }

  @Test
  void unclosedTag_isRejectedWithItsOffset() {
    assertThatThrownBy(() -> JinjaSourceRewriter.rewrite("ok {{ xs[0] "))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unclosed tag at offset 3");
  }
}
