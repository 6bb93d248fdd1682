package io.kvrouter.ingress.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvrouter.ingress.api.BodyReader;
import io.kvrouter.ingress.api.Endpoint;
import io.kvrouter.ingress.api.EngineExchange;
import io.kvrouter.ingress.api.InferenceRequest;
import io.kvrouter.ingress.api.RequestValidator;
import io.kvrouter.ingress.routing.Target;
import io.kvrouter.ingress.tokenize.ChatPrefixCache;
import io.kvrouter.ingress.tokenize.ModelSettings;
import io.kvrouter.ingress.tokenize.ModelTokenizer;
import io.kvrouter.ingress.tokenize.PromptEncoder;
import io.kvrouter.ingress.tokenize.TokenizerRegistry;
import io.kvrouter.protocol.keys.BlockKeys;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The ingress's own in-process steps for the next turn of a long chat, in thread CPU time: read the
 * body, validate, render and tokenize through the chat prefix cache (the previous turn cached),
 * block keys, serialise the engine body. Each step is timed over the last turns of a conversation
 * that grows as {@code ConversationTurns} grows its own (ChatML, o200k, as the demo model), from
 * about {@code tokens} tokens.
 *
 * <p>Run from the repository root after {@code mvn -pl ingress -am test-compile}: {@code java -cp
 * "ingress/target/test-classes:ingress/target/classes:$(cat ingress/target/cp.txt)"
 * io.kvrouter.ingress.http.LongTurnSteps [tokens] [turns]} (the class path from {@code
 * dependency:build-classpath -Dmdep.outputFile=target/cp.txt -Dmdep.includeScope=test}).
 */
public final class LongTurnSteps {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();
  private static final String[] STEPS = {"read", "validate", "tokenize", "keys", "body"};

  private LongTurnSteps() {}

  public static void main(String[] args) {
    int tokens = args.length > 0 ? Integer.parseInt(args[0]) : 131072;
    int turns = args.length > 1 ? Integer.parseInt(args[1]) : 60;
    TokenizerRegistry registry =
        TokenizerRegistry.fromSettings(
            List.of(
                new ModelSettings(
                    "kvrouter-demo", "tiktoken:o200k_base", ModelSettings.CHATML, 16, 1 << 20)));
    ModelTokenizer model = registry.get("kvrouter-demo");
    PromptEncoder encoder =
        new PromptEncoder(Runnable::run, new ChatPrefixCache(registry, 1 << 28));
    BodyReader reader = new BodyReader(JSON);
    RequestValidator validator = new RequestValidator();
    BlockKeys keys = BlockKeys.of("kvrouter-demo", 16);
    Target target = new Target("r0", "http://127.0.0.1:1", true);
    SplittableRandom random = new SplittableRandom(42);
    List<String[]> chat = new ArrayList<>();
    chat.add(new String[] {"system", words(random, 100)});
    while (model.encodeChat(asMessages(chat), null, true, Map.of()).length < tokens - 3000) {
      chat.add(new String[] {"user", words(random, 800)});
      chat.add(new String[] {"assistant", words(random, 200)});
    }
    chat.add(new String[] {"user", words(random, 100)});
    long[] total = new long[STEPS.length];
    int measured = 0;
    int promptTokens = 0;
    int bodyBytes = 0;
    for (int turn = 0; turn < turns; turn++) {
      chat.add(new String[] {"assistant", words(random, 30)});
      chat.add(new String[] {"user", words(random, 100)});
      byte[] body = body(chat);
      long[] t = new long[STEPS.length + 1];
      t[0] = CPU.getCurrentThreadCpuTime();
      var json = reader.read(body);
      t[1] = CPU.getCurrentThreadCpuTime();
      // as InferenceHandler: the request knows its body's bytes, which are forwarded as they came
      InferenceRequest request = validator.validate(Endpoint.CHAT, json).withSent(json, body);
      t[2] = CPU.getCurrentThreadCpuTime();
      int[] ids =
          encoder.encodeChat(
              model, request.messages(), request.tools(), true, request.templateKwargs());
      t[3] = CPU.getCurrentThreadCpuTime();
      long[] blockKeys = keys.keys(ids);
      t[4] = CPU.getCurrentThreadCpuTime();
      byte[] engineBody = EngineExchange.of(request, ids, target, JSON).body();
      t[5] = CPU.getCurrentThreadCpuTime();
      if (blockKeys.length == 0 || engineBody.length == 0) {
        throw new IllegalStateException("nothing computed");
      }
      if (turn >= turns / 2) {
        for (int s = 0; s < STEPS.length; s++) {
          total[s] += t[s + 1] - t[s];
        }
        measured++;
        promptTokens = ids.length;
        bodyBytes = body.length;
      }
    }
    System.out.printf(
        "next turn of a %,d-token chat (%,d body bytes), thread CPU per turn over %d turns:%n",
        promptTokens, bodyBytes, measured);
    double sum = 0;
    for (int s = 0; s < STEPS.length; s++) {
      double ms = total[s] / 1e6 / measured;
      sum += ms;
      System.out.printf("  %-9s %6.2f ms%n", STEPS[s], ms);
    }
    System.out.printf("  %-9s %6.2f ms%n", "total", sum);
    registry.close();
  }

  private static byte[] body(List<String[]> chat) {
    ObjectNode body = JSON.createObjectNode();
    body.put("model", "kvrouter-demo");
    body.put("max_tokens", 1);
    body.put("stream", true);
    ArrayNode messages = body.putArray("messages");
    for (String[] m : chat) {
      messages.addObject().put("role", m[0]).put("content", m[1]);
    }
    try {
      return JSON.writeValueAsBytes(body);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  private static List<Map<String, Object>> asMessages(List<String[]> chat) {
    List<Map<String, Object>> out = new ArrayList<>(chat.size());
    for (String[] m : chat) {
      out.add(Map.of("role", m[0], "content", m[1]));
    }
    return out;
  }

  /** Words of two to four consonant-vowel syllables (two to three o200k tokens each). */
  private static String words(SplittableRandom random, int n) {
    String consonants = "bdfgklmnprstvz";
    String vowels = "aeiou";
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < n; i++) {
      if (i > 0) {
        out.append(' ');
      }
      int syllables = 2 + random.nextInt(3);
      for (int c = 0; c < syllables; c++) {
        out.append(consonants.charAt(random.nextInt(consonants.length())));
        out.append(vowels.charAt(random.nextInt(vowels.length())));
      }
    }
    return out.toString();
  }
}
