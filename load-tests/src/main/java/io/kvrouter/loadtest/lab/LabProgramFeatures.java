package io.kvrouter.loadtest.lab;

import java.util.Set;

/**
 * The program features the lab adds to a policy (issue 55), named as suffixes of the policy in
 * {@code --policies}: {@code +warm} warms a program's next turn on its replica ({@link
 * LabPrograms}), {@code +las} orders each engine's waiting requests by program ({@link
 * LabEngine#submit}), {@code +affinity} keeps a session on the replica it is bound to as the
 * ingress's session router does ({@link LabSessions}), {@code +keep} is affinity where a session in
 * mid-session keeps its bound replica even when the replica is busy or has more work queued (only
 * sessions that open are placed by the policy: program-aware placement), {@code +hold} is affinity
 * where a session in mid-session keeps its bound replica only while its history fits beside the
 * other held sessions' in that replica's cache (the ingress's {@code ProgramHold}, with the run's
 * capacity as the replica's cache; {@code +holdN} with a share of N percent of it in place of the
 * ingress's default; {@code +holdfull} holding sessions only when no other replica has room; {@code
 * +queue} adds the hold's queue test, {@code queue-excess = 1}, {@code +queueN} at N percent, and
 * implies {@code +hold}), {@code +bonusN} is affinity with an affinity bonus of N tokens in place
 * of the ingress's default. {@code +warmfree} is a control, not a model: {@code +warm} whose
 * warm-ups take no engine time (their tokens add nothing to a pass's duration), which no engine
 * gives; against {@code +warm} it separates what warm-ups change by occupying the engine from what
 * they change through the cache. {@code kvrouter+warm+las} is kvrouter with the first two, {@code
 * kvrouter} the same run without them. Warming and program order model what the ingress and engine
 * do for a program, so any policy takes them; affinity is kvrouter's ingress's, so only kvrouter's
 * policies take it.
 *
 * @param warm warm the next turn after a reply that ends in a tool call
 * @param las continuing programs ahead of new ones, least attained service first
 * @param affinity the ingress's session affinity (bound replica and its bonus)
 * @param keep a session's later requests run on its bound replica while it is alive (implies
 *     affinity)
 * @param holdPercent a session's later requests run on its bound replica while its history fits
 *     there beside the others held, in this percentage of its cache (-1: the ingress's default
 *     share; 0: no hold; any other value implies affinity)
 * @param holdOnlyWhenFull the hold keeps sessions only when no other replica has room for them
 * @param bonusTokens the affinity bonus in tokens, or -1 for the ingress's default (a value implies
 *     affinity)
 * @param warmFree warm-ups take no engine time (a control; implies warm)
 * @param oldest continuing programs ahead of new ones, the one that started first first (program
 *     age order, in place of {@code las})
 * @param queuePercent the hold's queue test at this percentage of the history (the ingress's {@code
 *     hold.queue-excess} x 100; 0: none; implies the hold)
 */
public record LabProgramFeatures(
    boolean warm,
    boolean las,
    boolean affinity,
    boolean keep,
    int holdPercent,
    boolean holdOnlyWhenFull,
    long bonusTokens,
    boolean warmFree,
    boolean oldest,
    int queuePercent) {

  /** Without the {@code +warmfree} control, {@code +oldest} and {@code +queue}. */
  public LabProgramFeatures(
      boolean warm,
      boolean las,
      boolean affinity,
      boolean keep,
      int holdPercent,
      boolean holdOnlyWhenFull,
      long bonusTokens) {
    this(warm, las, affinity, keep, holdPercent, holdOnlyWhenFull, bonusTokens, false, false, 0);
  }

  /** No program feature. */
  public static final LabProgramFeatures NONE =
      new LabProgramFeatures(false, false, false, false, 0, false, -1);

  private static final Set<String> NAMES =
      Set.of("warm", "warmfree", "las", "oldest", "affinity", "keep");

  /** {@code bonusN}: an affinity bonus of N tokens. */
  private static final String BONUS = "bonus[0-9]{1,9}";

  /** {@code hold} or {@code holdN}: the ingress's program hold, with a share of N percent. */
  private static final String HOLD = "hold([1-9][0-9]?|100|full)?";

  /** {@code queue} or {@code queueN}: the hold's queue test at N percent of the history. */
  private static final String QUEUE = "queue([1-9][0-9]{0,3})?";

  public LabProgramFeatures {
    holdPercent = queuePercent > 0 && holdPercent == 0 ? -1 : holdPercent;
    affinity |= keep || holdPercent != 0 || bonusTokens >= 0;
    warm |= warmFree;
    if (las && oldest) {
      throw new IllegalArgumentException("+las and +oldest are two program orders: name one");
    }
  }

  /** Whether sessions are held while their history fits ({@code +hold}). */
  public boolean hold() {
    return holdPercent != 0;
  }

  /** The features named at the end of {@code label} ({@code NAME+warm+las}). */
  public static LabProgramFeatures of(String label) {
    boolean warm = false;
    boolean warmFree = false;
    boolean las = false;
    boolean oldest = false;
    boolean affinity = false;
    boolean keep = false;
    int hold = 0;
    boolean full = false;
    long bonus = -1;
    int queue = 0;
    for (String f : suffixes(label)) {
      queue = f.matches(QUEUE) ? (f.length() == 5 ? 100 : Integer.parseInt(f.substring(5))) : queue;
      keep |= f.equals("keep");
      full |= f.equals("holdfull");
      hold =
          f.matches(HOLD)
              ? (f.length() == 4 || full ? -1 : Integer.parseInt(f.substring(4)))
              : hold;
      bonus = f.matches(BONUS) ? Long.parseLong(f.substring(5)) : bonus;
      warm |= f.equals("warm");
      warmFree |= f.equals("warmfree");
      las |= f.equals("las");
      oldest |= f.equals("oldest");
      affinity |= f.equals("affinity");
    }
    if ((affinity || keep || hold != 0 || bonus >= 0 || queue > 0)
        && !label.startsWith("kvrouter")) {
      throw new IllegalArgumentException(
          "policy '"
              + label
              + "': +affinity, +keep and +hold are kvrouter's ingress session affinity");
    }
    return new LabProgramFeatures(
        warm, las, affinity, keep, hold, full, bonus, warmFree, oldest, queue);
  }

  /**
   * {@code label} without its feature suffixes.
   *
   * @throws IllegalArgumentException for a suffix that names no feature
   */
  public static String strip(String label) {
    int plus = label.indexOf('+');
    if (plus < 0) {
      return label;
    }
    suffixes(label);
    return label.substring(0, plus);
  }

  private static String[] suffixes(String label) {
    int plus = label.indexOf('+');
    if (plus < 0) {
      return new String[0];
    }
    String[] out = label.substring(plus + 1).split("\\+");
    for (String f : out) {
      if (!NAMES.contains(f) && !f.matches(BONUS) && !f.matches(HOLD) && !f.matches(QUEUE)) {
        throw new IllegalArgumentException(
            "policy '"
                + label
                + "': '+"
                + f
                + "' is no program feature; known: +warm, +warmfree, +las, +oldest, +affinity, +keep, +hold, +holdN, +holdfull, +queue, +queueN, +bonusN");
      }
    }
    return out;
  }

  /** Whether any feature is on. */
  public boolean any() {
    return warm || las || oldest || affinity;
  }
}
