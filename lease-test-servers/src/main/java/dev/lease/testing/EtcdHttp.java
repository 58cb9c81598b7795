package dev.lease.testing;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** What a test asks an etcd member over its HTTP gateway and metrics endpoint, for {@link EtcdServer}. */
final class EtcdHttp {

    private static final Pattern LEADER = Pattern.compile("\"leader\":\"(\\d+)\"");
    private static final Pattern MEMBER_ID = Pattern.compile("\"member_id\":\"(\\d+)\"");

    private EtcdHttp() {
    }

    /**
     * The id of the raft leader the member at {@code endpoint} names ({@code /v3/maintenance/status}).
     *
     * @throws IllegalStateException when it knows no leader
     * @throws IOException when it does not answer
     */
    static String leaderId(String endpoint) throws IOException {
        String status = post(endpoint + "/v3/maintenance/status", "{}");
        Matcher leader = LEADER.matcher(status);
        if (!leader.find() || "0".equals(leader.group(1))) {
            throw new IllegalStateException("etcd member at " + endpoint + " knows no leader: " + status);
        }
        return leader.group(1);
    }

    /** The member's own id, or empty when it does not answer (a paused member). */
    static Optional<String> memberId(String endpoint) {
        try {
            Matcher id = MEMBER_ID.matcher(post(endpoint + "/v3/maintenance/status", "{}"));
            return id.find() ? Optional.of(id.group(1)) : Optional.empty();
        }
        catch (IOException silent) {
            return Optional.empty();
        }
    }

    /** The sum of {@code grpc_server_msg_received_total} on the member's metrics endpoint. */
    static long receivedRequests(String endpoint) throws IOException {
        HttpURLConnection http = (HttpURLConnection) URI.create(endpoint + "/metrics").toURL().openConnection();
        http.setConnectTimeout(5000);
        http.setReadTimeout(10_000);
        try (InputStream in = http.getInputStream()) {
            double total = 0;
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (line.startsWith("grpc_server_msg_received_total{")) {
                    total += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1).trim());
                }
            }
            return (long) total;
        }
        finally {
            http.disconnect();
        }
    }

    /** Whether the member answers {@code /health} with {@code true} now. */
    static boolean healthy(String endpoint) {
        try {
            HttpURLConnection http = (HttpURLConnection) URI.create(endpoint + "/health").toURL().openConnection();
            http.setConnectTimeout(1000);
            http.setReadTimeout(1000);
            try (InputStream in = http.getInputStream()) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8).contains("\"health\":\"true\"");
            }
            finally {
                http.disconnect();
            }
        }
        catch (IOException ex) {
            return false;
        }
    }

    private static String post(String url, String body) throws IOException {
        HttpURLConnection http = (HttpURLConnection) URI.create(url).toURL().openConnection();
        http.setConnectTimeout(2000);
        http.setReadTimeout(5000);
        http.setRequestMethod("POST");
        http.setDoOutput(true);
        try {
            http.getOutputStream().write(body.getBytes(StandardCharsets.UTF_8));
            try (InputStream in = http.getInputStream()) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
        }
        finally {
            http.disconnect();
        }
    }
}
