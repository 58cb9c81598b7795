package dev.lease.fence.http;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

import tools.jackson.databind.json.JsonMapper;

import dev.lease.FencingToken;
import dev.lease.fence.StaleTokenException;

/**
 * The {@code application/problem+json} bodies (RFC 9457) of a refused fenced request, written by the server and read
 * back by the client into a {@link StaleTokenException}.
 */
final class FencingProblems {

    static final String PROBLEM_JSON = "application/problem+json";

    /** 409: the resource already accepted a higher token of the lease. */
    static final String STALE_TOKEN = "urn:lease:problem:stale-token";

    /** 428: no token the server can compare (missing, malformed, or of another lease than the resource's). */
    static final String TOKEN_REQUIRED = "urn:lease:problem:fencing-token-required";

    /** A stale-token body larger than this is not ours. */
    static final int MAX_BODY = 64 * 1024;

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private FencingProblems() {
    }

    static byte[] stale(StaleTokenException stale, String instance) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("type", STALE_TOKEN);
        body.put("title", "Stale fencing token");
        body.put("status", 409);
        body.put("detail", "Resource '" + stale.resource() + "' already accepted token " + stale.current()
                + " of lease '" + stale.presented().lease() + "'; this request carried token "
                + stale.presented().value() + ". The lease was lost and a later holder has written.");
        body.put("instance", instance);
        body.put("resource", stale.resource());
        body.put("lease", stale.presented().lease());
        body.put("presented", stale.presented().value());
        body.put("current", stale.current());
        return JSON.writeValueAsBytes(body);
    }

    static byte[] tokenRequired(String reason, String resource, String instance) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("type", TOKEN_REQUIRED);
        body.put("title", "Fencing token required");
        body.put("status", 428);
        body.put("detail", reason + " Send the token of the lease this resource is written under: "
                + FencingTokenHeader.NAME + ": 7;lease=\"invoice-42\".");
        body.put("instance", instance);
        body.put("header", FencingTokenHeader.NAME);
        body.put("reason", reason);
        body.put("resource", resource);
        return JSON.writeValueAsBytes(body);
    }

    /**
     * The refusal a 409 body describes, when it is a stale-token problem with its resource and current token.
     *
     * @param sent the token the request carried, when the body does not repeat its lease or value
     */
    static Optional<StaleTokenException> readStale(byte[] body, FencingToken sent) {
        Map<?, ?> problem;
        try {
            problem = JSON.readValue(body, Map.class);
        }
        catch (RuntimeException notJson) {
            return Optional.empty();
        }
        if (problem == null || !STALE_TOKEN.equals(problem.get("type"))
                || !(problem.get("resource") instanceof String resource)
                || !(problem.get("current") instanceof Number current)) {
            return Optional.empty();
        }
        String lease = problem.get("lease") instanceof String named ? named : sent.lease();
        long presented = problem.get("presented") instanceof Number value ? value.longValue() : sent.value();
        return Optional.of(new StaleTokenException(resource, new FencingToken(lease, presented), current.longValue()));
    }

    /** Whether a content type may carry a problem body: {@code application/problem+json} or plain JSON. */
    static boolean isProblemJson(String contentType) {
        if (contentType == null) {
            return false;
        }
        String type = contentType.split(";", 2)[0].trim();
        return type.equalsIgnoreCase(PROBLEM_JSON) || type.equalsIgnoreCase("application/json");
    }
}
