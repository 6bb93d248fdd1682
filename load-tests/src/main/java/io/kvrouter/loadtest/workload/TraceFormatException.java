package io.kvrouter.loadtest.workload;

/**
 * A trace line that does not follow the Mooncake trace format; the message names the file and line.
 */
public final class TraceFormatException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final long lineNumber;

  TraceFormatException(String file, long lineNumber, String problem, Throwable cause) {
    super(file + ":" + lineNumber + ": " + problem, cause);
    this.lineNumber = lineNumber;
  }

  /** 1-based number of the offending line. */
  public long lineNumber() {
    return lineNumber;
  }
}
