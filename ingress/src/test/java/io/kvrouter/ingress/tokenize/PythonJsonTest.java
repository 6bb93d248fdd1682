package io.kvrouter.ingress.tokenize;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Python {@code json.dumps} details that the jinja2 cases do not reach. */
class PythonJsonTest {

  @Test
  void floats_usePythonRepr() {
    assertThat(PythonJson.pythonFloat(1.0)).isEqualTo("1.0");
    assertThat(PythonJson.pythonFloat(0.0001)).isEqualTo("0.0001");
    assertThat(PythonJson.pythonFloat(0.00001)).isEqualTo("1e-05");
    assertThat(PythonJson.pythonFloat(1e15)).isEqualTo("1000000000000000.0");
    assertThat(PythonJson.pythonFloat(1.5e16)).isEqualTo("1.5e+16");
    assertThat(PythonJson.pythonFloat(-2.5e-7)).isEqualTo("-2.5e-07");
    assertThat(PythonJson.pythonFloat(123.456)).isEqualTo("123.456");
    assertThat(PythonJson.pythonFloat(Double.NaN)).isEqualTo("NaN");
  }

  @Test
  void ensureAscii_escapesNonAsciiAsUtf16Units() {
    var options = new PythonJson.Options(null, ", ", ": ", false, true);
    assertThat(PythonJson.dumps("é🌞\u007f", options)).isEqualTo("\"\\u00e9\\ud83c\\udf1e\u007f\"");
  }

  @Test
  void nonStringKeys_becomeTheirJsonText() {
    Map<Object, Object> m = new LinkedHashMap<>();
    m.put(1, "a");
    m.put(true, "b");
    m.put(null, "c");
    assertThat(PythonJson.dumps(m, PythonJson.Options.DEFAULT))
        .isEqualTo("{\"1\": \"a\", \"true\": \"b\", \"null\": \"c\"}");
  }

  @Test
  void arraysAndLongs_areWritten() {
    assertThat(
            PythonJson.dumps(List.of(new int[] {1, 2}, 12345678901L), PythonJson.Options.DEFAULT))
        .isEqualTo("[[1, 2], 12345678901]");
  }
}
