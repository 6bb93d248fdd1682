package io.kvrouter.loadtest.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * CPU time of another process on Linux, from {@code /proc/<pid>/stat} (user + system, fields 14 and
 * 15) and per thread from {@code /proc/<pid>/task/<tid>/stat}, summed by thread name with digits
 * dropped so pool threads fold into one group ({@code grpc-default-executor-}, {@code C2
 * CompilerThread}). Threads that ended between two snapshots drop out of the groups, not of the
 * total.
 *
 * <p>Resolution is one clock tick ({@code USER_HZ}, 10 ms on Linux); measure windows of seconds.
 * Cost: one small file read per thread per snapshot.
 */
final class ProcessCpu {

  /** Linux's USER_HZ, the unit of /proc's times: 100 on every architecture kvrouter runs on. */
  private static final double TICKS_PER_SECOND = 100;

  private final long pid;

  ProcessCpu(long pid) {
    this.pid = pid;
  }

  /** CPU seconds of the whole process so far. */
  double totalSeconds() throws IOException {
    return ticks(Files.readString(Path.of("/proc", Long.toString(pid), "stat"))) / TICKS_PER_SECOND;
  }

  /** One thread's CPU seconds so far and its group. */
  record ThreadTime(String group, double seconds) {}

  /** CPU seconds so far of each live thread, by thread id. */
  Map<String, ThreadTime> threads() throws IOException {
    Map<String, ThreadTime> threads = new HashMap<>();
    try (DirectoryStream<Path> tasks =
        Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "task"))) {
      for (Path task : tasks) {
        String stat;
        try {
          stat = Files.readString(task.resolve("stat"));
        } catch (IOException gone) {
          continue; // the thread ended
        }
        String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        threads.put(
            task.getFileName().toString(),
            new ThreadTime(name.replaceAll("[0-9]+", "").trim(), ticks(stat) / TICKS_PER_SECOND));
      }
    }
    return threads;
  }

  /** CPU seconds by thread group between two {@link #threads} snapshots, largest first. */
  static Map<String, Double> groupDeltas(
      Map<String, ThreadTime> before, Map<String, ThreadTime> after) {
    Map<String, Double> groups = new HashMap<>();
    after.forEach(
        (tid, t) -> {
          ThreadTime then = before.get(tid);
          double d = t.seconds() - (then == null ? 0 : then.seconds());
          if (d > 0) {
            groups.merge(t.group(), d, Double::sum);
          }
        });
    Map<String, Double> sorted = new LinkedHashMap<>();
    groups.entrySet().stream()
        .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
        .forEach(e -> sorted.put(e.getKey(), e.getValue()));
    return sorted;
  }

  /** utime + stime of a stat line; the name in parentheses may hold spaces, so count after it. */
  static long ticks(String stat) {
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
    // f[0] is field 3 (state): utime is field 14, stime field 15.
    return Long.parseLong(f[11]) + Long.parseLong(f[12]);
  }
}
