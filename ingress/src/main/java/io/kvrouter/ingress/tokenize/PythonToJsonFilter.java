package io.kvrouter.ingress.tokenize;

import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.filter.AdvancedFilter;
import java.util.List;
import java.util.Map;

/**
 * The {@code tojson} filter as Hugging Face transformers defines it for chat templates ({@code
 * json.dumps} with {@code ensure_ascii=False}; see {@link PythonJson}), replacing jinjava's compact
 * one. Accepts transformers' parameters positionally or by name: {@code ensure_ascii}, {@code
 * indent}, {@code separators} (a two-element list), {@code sort_keys}.
 *
 * <p>Stateless and thread-safe; cost is linear in the size of the value.
 */
final class PythonToJsonFilter implements AdvancedFilter {

  private static final List<String> PARAMS =
      List.of("ensure_ascii", "indent", "separators", "sort_keys");

  @Override
  public String getName() {
    return "tojson";
  }

  @Override
  public Object filter(
      Object var, JinjavaInterpreter interpreter, Object[] args, Map<String, Object> kwargs) {
    Object[] values = new Object[PARAMS.size()];
    for (int i = 0; args != null && i < args.length && i < values.length; i++) {
      values[i] = args[i];
    }
    for (int i = 0; i < values.length; i++) {
      if (kwargs != null && kwargs.containsKey(PARAMS.get(i))) {
        values[i] = kwargs.get(PARAMS.get(i));
      }
    }
    boolean ensureAscii = Boolean.TRUE.equals(values[0]);
    Integer indent = values[1] instanceof Number n ? Integer.valueOf(n.intValue()) : null;
    boolean sortKeys = Boolean.TRUE.equals(values[3]);
    String item = indent == null ? ", " : ",";
    String key = ": ";
    if (values[2] instanceof List<?> seps && seps.size() == 2) {
      item = String.valueOf(seps.get(0));
      key = String.valueOf(seps.get(1));
    }
    return PythonJson.dumps(var, new PythonJson.Options(indent, item, key, sortKeys, ensureAscii));
  }
}
