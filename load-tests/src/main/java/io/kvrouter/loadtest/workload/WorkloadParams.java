package io.kvrouter.loadtest.workload;

import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Named string parameters of a workload generator, read with typed defaults; unknown names are
 * rejected so a typo does not silently fall back to a default. Immutable; O(1) per lookup.
 */
public final class WorkloadParams {

  private final String workload;
  private final Map<String, String> values;

  WorkloadParams(String workload, Map<String, String> values, Set<String> known) {
    this.workload = workload;
    this.values = Map.copyOf(values);
    Set<String> unknown = new TreeSet<>(values.keySet());
    unknown.removeAll(known);
    if (!unknown.isEmpty()) {
      throw new IllegalArgumentException(
          "workload '"
              + workload
              + "' has no parameter(s) "
              + unknown
              + "; known: "
              + new TreeSet<>(known));
    }
  }

  String string(String name, String fallback) {
    return values.getOrDefault(name, fallback);
  }

  int positiveInt(String name, int fallback) {
    String v = values.get(name);
    if (v == null) {
      return fallback;
    }
    try {
      int x = Integer.parseInt(v.trim());
      if (x <= 0) {
        throw new IllegalArgumentException(
            where(name) + " must be a positive integer, got '" + v + "'");
      }
      return x;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          where(name) + " must be a positive integer, got '" + v + "'", e);
    }
  }

  /** A positive number; {@code inf} is accepted and returns infinity. */
  double positiveDouble(String name, double fallback) {
    String v = values.get(name);
    if (v == null) {
      return fallback;
    }
    try {
      double x =
          v.trim().equalsIgnoreCase("inf")
              ? Double.POSITIVE_INFINITY
              : Double.parseDouble(v.trim());
      if (!(x > 0)) {
        throw new IllegalArgumentException(where(name) + " must be positive, got '" + v + "'");
      }
      return x;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          where(name) + " must be a positive number, got '" + v + "'", e);
    }
  }

  /** A number in [0, 1). */
  double fraction(String name, double fallback) {
    String v = values.get(name);
    if (v == null) {
      return fallback;
    }
    try {
      double x = Double.parseDouble(v.trim());
      if (!(x >= 0 && x < 1)) {
        throw new IllegalArgumentException(where(name) + " must be in [0, 1), got '" + v + "'");
      }
      return x;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(where(name) + " must be a number, got '" + v + "'", e);
    }
  }

  private String where(String name) {
    return "parameter '" + name + "' of workload '" + workload + "'";
  }
}
