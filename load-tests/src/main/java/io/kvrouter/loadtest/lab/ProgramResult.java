package io.kvrouter.loadtest.lab;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * What a run measured of the programs of a workload ({@link LabPrograms}).
 *
 * @param continuingTtft TTFT of the continuing turns (every request of a program but its first)
 * @param sessionCompletion a top-level program's first arrival to its last token
 * @param missingTokens per continuing turn, the prompt tokens the engine did not hold when it first
 *     admitted it
 * @param sessions top-level programs that finished
 * @param warmedTokens prompt tokens warm-ups prefilled
 * @param warmsDropped warm-ups cancelled, preempted or refused for want of headroom
 * @param fanOuts where sub-agent fan-outs landed
 * @param sessionTime where a top-level session's time went, over every session
 * @param slowSessionTime the same over the sessions at or above the completion time's p90
 * @param ttftByRequest each request's TTFT in ms by request index (-1: none), never mutated
 * @param requestKeys each request's key ({@code Programs#key}: session and turn) by request index,
 *     which names it across runs whose arrivals (and so indexes) differ, never mutated
 */
public record ProgramResult(
    Latency continuingTtft,
    Latency sessionCompletion,
    Latency missingTokens,
    int sessions,
    long warmedTokens,
    long warmsDropped,
    FanOuts fanOuts,
    SessionTime sessionTime,
    SessionTime slowSessionTime,
    double[] ttftByRequest,
    String[] requestKeys) {

  /**
   * Where the sub-agent fan-outs landed: a fan-out is a request whose reply two or more sub-agents
   * follow (their first requests share its prompt and reply), its parent replica the one that
   * answered it.
   *
   * @param count fan-outs
   * @param subAgents sub-agents they started
   * @param replicasPerFanOut mean distinct replicas a fan-out's first requests ran on
   * @param onParentShare share of the sub-agents whose first request ran on the parent replica
   * @param subMissingMean mean prompt tokens a sub-agent's first request found uncached
   * @param joinOnParentShare share of the parent's next turns (after the sub-agents) that ran on
   *     the parent replica
   * @param joinMissingMean mean prompt tokens the parent's next turn found uncached
   */
  public record FanOuts(
      int count,
      int subAgents,
      double replicasPerFanOut,
      double onParentShare,
      double subMissingMean,
      double joinOnParentShare,
      double joinMissingMean) {

    /** No fan-out. */
    public static final FanOuts NONE = new FanOuts(0, 0, 0, 0, 0, 0, 0);
  }

  /**
   * Where the time of top-level sessions went, as a mean per session in seconds: its own turns'
   * time to first token (queueing and prefill) and after it (decode, and any wait for KV room), the
   * tool runs before its turns, and the rest (waiting for sub-agents whose turns outlast it).
   *
   * @param sessions sessions measured
   * @param totalS first arrival to last token
   * @param firstTokenS its own turns' TTFT, summed
   * @param decodeS its own turns' first token to last, summed
   * @param toolS the tool runs before its own turns, summed
   * @param subAgentS the rest: total less the three above
   */
  public record SessionTime(
      int sessions,
      double totalS,
      double firstTokenS,
      double decodeS,
      double toolS,
      double subAgentS) {

    /** No session. */
    public static final SessionTime NONE = new SessionTime(0, 0, 0, 0, 0, 0);

    void write(ObjectNode o) {
      o.put("sessions", sessions);
      o.put("total_s", totalS);
      o.put("first_token_s", firstTokenS);
      o.put("decode_s", decodeS);
      o.put("tool_s", toolS);
      o.put("sub_agent_s", subAgentS);
    }
  }

  /**
   * Writes the measures, and each request's TTFT ({@code ttft_by_request_ms}, aligned with {@code
   * request_keys}), into {@code o}.
   */
  void write(ObjectNode o) {
    ObjectNode c = o.putObject("continuing_ttft_ms");
    c.put("p50", continuingTtft.p50());
    c.put("p90", continuingTtft.p90());
    c.put("p99", continuingTtft.p99());
    ObjectNode s = o.putObject("session_completion_ms");
    s.put("p50", sessionCompletion.p50());
    s.put("p90", sessionCompletion.p90());
    o.put("missing_tokens_mean", missingTokens.mean());
    o.put("sessions", sessions);
    o.put("warmed_tokens", warmedTokens);
    o.put("warms_dropped", warmsDropped);
    ObjectNode f = o.putObject("fan_outs");
    f.put("count", fanOuts.count());
    f.put("sub_agents", fanOuts.subAgents());
    f.put("replicas_per_fan_out", fanOuts.replicasPerFanOut());
    f.put("on_parent_share", fanOuts.onParentShare());
    f.put("sub_missing_mean", fanOuts.subMissingMean());
    f.put("join_on_parent_share", fanOuts.joinOnParentShare());
    f.put("join_missing_mean", fanOuts.joinMissingMean());
    sessionTime.write(o.putObject("session_time"));
    slowSessionTime.write(o.putObject("slow_session_time"));
    ArrayNode ttft = o.putArray("ttft_by_request_ms");
    for (double t : ttftByRequest) {
      ttft.add(t);
    }
    ArrayNode keys = o.putArray("request_keys");
    for (String k : requestKeys) {
      keys.add(k);
    }
  }
}
