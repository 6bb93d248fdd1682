package io.kvrouter.loadtest.dashboard;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvrouter.loadtest.testing.LoopbackHttp;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;

/** Small loopback HTTP helpers for the dashboard tests. */
final class Http {

  static final ObjectMapper JSON = LoopbackHttp.JSON;
  static final HttpClient CLIENT = LoopbackHttp.CLIENT;

  private Http() {}

  static HttpResponse<String> post(String url, JsonNode body) throws Exception {
    return LoopbackHttp.post(url, body.toString());
  }

  static String get(String url) throws Exception {
    HttpResponse<String> r = LoopbackHttp.get(url);
    if (r.statusCode() != 200) {
      throw new IllegalStateException("GET " + url + ": " + r.statusCode() + " " + r.body());
    }
    return r.body();
  }
}
