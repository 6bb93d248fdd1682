package io.kvrouter.loadtest.baselines;

import io.kvrouter.tracker.index.MatchResult;
import io.kvrouter.tracker.policy.RouteQuery;
import java.nio.file.*;
import java.util.*;
import java.util.regex.*;

/**
 * Replays the first N requests of a Mooncake trace through {@code PreblePolicy} with the timing
 * {@code run.py} gives Preble's own scheduler (first token 200 ms, end 1.1 s after each decision)
 * and prints the chosen replica of each request. Not part of the build: see README.md here.
 */
public class PrebleDiff {
  public static void main(String[] a) throws Exception {
    int n = Integer.parseInt(a[0]);
    int reps = Integer.parseInt(a[1]);
    List<String> lines = Files.readAllLines(Path.of(a[2]));
    Pattern ts = Pattern.compile("\"timestamp\": (\\d+)");
    Pattern ids = Pattern.compile("\"hash_ids\": \\[([^\\]]*)\\]");
    PreblePolicy p = new PreblePolicy();
    int[] cand = new int[reps];
    for (int i = 0; i < reps; i++) cand[i] = i;
    PriorityQueue<long[]> ev = new PriorityQueue<>((x, y) -> x[0] != y[0] ? Long.compare(x[0], y[0]) : Long.compare(x[1], y[1]));
    MatchResult m = new MatchResult();
    StringBuilder out = new StringBuilder();
    long seq = 0;
    for (int i = 0; i < n; i++) {
      String l = lines.get(i);
      Matcher mt = ts.matcher(l); mt.find();
      long t = Long.parseLong(mt.group(1));
      Matcher mi = ids.matcher(l); mi.find();
      long[] keys = Arrays.stream(mi.group(1).split(",")).map(String::trim).mapToLong(Long::parseLong).toArray();
      while (!ev.isEmpty() && ev.peek()[0] <= t) {
        long[] e = ev.poll();
        if (e[2] == 0) p.onPrefillCompleted("q" + e[3], e[0]); else p.onReleased("q" + e[3], e[0]);
      }
      RouteQuery q = RouteQuery.of(keys, keys.length * 512, 512, t);
      int pick = p.rank(q, cand, m, null)[0];
      p.onRouted(q, m, pick);
      p.onReserved("q" + i, q, pick);
      ev.add(new long[] {t + 200, seq++, 0, i});
      ev.add(new long[] {t + 1100, seq++, 1, i});
      out.append(pick).append(i + 1 < n ? " " : "");
    }
    System.out.println(out);
  }
}
