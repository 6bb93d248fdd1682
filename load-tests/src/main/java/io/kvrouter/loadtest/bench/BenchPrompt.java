package io.kvrouter.loadtest.bench;

import java.util.List;

/**
 * The prompt of one benchmark request, in one of the three forms an OpenAI-compatible server
 * accepts: plain text or token ids for {@code /v1/completions}, chat messages for {@code
 * /v1/chat/completions} (text is also accepted there: it becomes one user message).
 *
 * <p>{@link TokenIds} holds an array that is never mutated after construction; callers must not
 * mutate it either.
 */
public sealed interface BenchPrompt
    permits BenchPrompt.Text, BenchPrompt.TokenIds, BenchPrompt.Chat {

  /** A text prompt. */
  static BenchPrompt text(String text) {
    return new Text(text);
  }

  /** A prompt given as token ids (sent as {@code "prompt": [ids]}); the array is not copied. */
  static BenchPrompt tokens(int[] ids) {
    return new TokenIds(ids);
  }

  /** A chat conversation. */
  static BenchPrompt chat(List<ChatMessage> messages) {
    return new Chat(messages);
  }

  /** Rough size for reports: characters for text and chat, ids for token prompts. */
  int size();

  /** Plain text. */
  record Text(String text) implements BenchPrompt {
    public Text {
      if (text == null) {
        throw new IllegalArgumentException("text prompt must not be null");
      }
    }

    @Override
    public int size() {
      return text.length();
    }
  }

  /** Token ids; the array is shared, not copied. */
  record TokenIds(int[] ids) implements BenchPrompt {
    public TokenIds {
      if (ids == null) {
        throw new IllegalArgumentException("token ids must not be null");
      }
    }

    @Override
    public int size() {
      return ids.length;
    }
  }

  /** Chat messages, in order. */
  record Chat(List<ChatMessage> messages) implements BenchPrompt {
    public Chat {
      if (messages == null || messages.isEmpty()) {
        throw new IllegalArgumentException("a chat prompt needs at least one message");
      }
      messages = List.copyOf(messages);
    }

    @Override
    public int size() {
      int n = 0;
      for (ChatMessage m : messages) {
        n += m.content().length();
      }
      return n;
    }
  }

  /** One chat message: {@code role} is {@code system}, {@code user} or {@code assistant}. */
  record ChatMessage(String role, String content) {
    public ChatMessage {
      if (role == null || content == null) {
        throw new IllegalArgumentException("role and content are required");
      }
    }
  }
}
