package io.kvrouter.protocol;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Objects;

/**
 * Whether a replica's KV events line up with the router's block keys, as its agent's alignment
 * self-test found at connect (and after every engine restart). Travels inside {@link ReplicaInfo}
 * (CBOR). Trackers do not trust the index of an {@link State#UNALIGNED} replica: it is routed to by
 * load alone, never for a predicted cache hit.
 *
 * @param state the verdict
 * @param reason why, for anything but {@link State#ALIGNED} (empty when none is known)
 */
public record AlignmentStatus(State state, String reason) {

  /** The self-test's verdict. */
  public enum State {
    /** The engine's blocks carry the router's block size and keys. */
    @JsonProperty("aligned")
    ALIGNED,
    /** They do not (block size, tokenizer or hash seed); the reason says which. */
    @JsonProperty("unaligned")
    UNALIGNED,
    /** Not checked: the probe is off, the engine publishes no events, or the probe saw nothing. */
    @JsonProperty("unchecked")
    UNCHECKED;

    /** The name on the wire and in JSON views. */
    public String label() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /** Not checked, no reason known: what announcements without the field read as. */
  public static final AlignmentStatus UNCHECKED = new AlignmentStatus(State.UNCHECKED, "");

  /** Checked and aligned. */
  public static final AlignmentStatus ALIGNED = new AlignmentStatus(State.ALIGNED, "");

  public AlignmentStatus {
    state = state == null ? State.UNCHECKED : state;
    reason = reason == null ? "" : reason;
  }

  /** Unaligned, for {@code why}. */
  public static AlignmentStatus unaligned(String why) {
    return new AlignmentStatus(State.UNALIGNED, why);
  }

  /** Unchecked, for {@code why}. */
  public static AlignmentStatus unchecked(String why) {
    return new AlignmentStatus(State.UNCHECKED, why);
  }

  /** True when trackers must not trust the replica's index. */
  public boolean untrusted() {
    return state == State.UNALIGNED;
  }

  /** Jackson's filter: unchecked without a reason is not written. */
  static final class NothingChecked {
    @Override
    public boolean equals(Object value) {
      return Objects.equals(value, UNCHECKED);
    }

    @Override
    public int hashCode() {
      return UNCHECKED.hashCode();
    }
  }
}
