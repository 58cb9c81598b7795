package dev.lease.fence.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Random;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

import dev.lease.FencingToken;

/**
 * Seeded random {@code Fencing-Token} values, sent byte for byte over a raw socket to the real payments service: none
 * may get a 5xx, and the handler runs only for a value that is a well-formed header of the resource's lease (printed
 * seed; replay with {@code -Dlease-test.seed=...}).
 */
class MalformedHeadersFuzzTest {

    private static final int REQUESTS = 400;
    private static final String VALID = "5;lease=\"invoice-900\"";

    private static ConfigurableApplicationContext payments;
    private static URI base;

    @BeforeAll
    static void start() {
        payments = PaymentsApp.start(false);
        base = URI.create(PaymentsApp.baseUrl(payments));
    }

    @AfterAll
    static void stop() {
        if (payments != null) {
            payments.close();
        }
    }

    @Test
    void noHeaderGetsA5xxOrRunsTheHandlerUnlessItIsAValidToken() throws IOException {
        long seed = Long.getLong("lease-test.seed", new Random().nextLong());
        System.out.println("MalformedHeadersFuzzTest seed " + seed + " (replay with -Dlease-test.seed=" + seed + ")");
        Random random = new Random(seed);
        assertThat(post(VALID.getBytes(StandardCharsets.US_ASCII))).as("a valid header").isEqualTo(200);
        int accepted = 0;
        int before = PaymentsApp.handlerRuns.get();
        for (int i = 0; i < REQUESTS; i++) {
            byte[] value = mutate(random);
            int status = post(value);
            String shown = shown(value);
            assertThat(status).as("seed %d, request %d, header [%s]", seed, i, shown).isLessThan(500);
            if (status == 200) {
                accepted++;
                assertThat(wellFormedForTheLease(value)).as("seed %d, request %d: accepted header [%s]", seed, i, shown)
                        .isTrue();
            }
            else if (!wellFormedForTheLease(value)) {
                assertThat(status).as("seed %d, request %d, header [%s]", seed, i, shown).isIn(400, 428);
            }
        }
        assertThat(PaymentsApp.handlerRuns.get() - before).as("handler runs, seed %d", seed).isEqualTo(accepted);
    }

    /** What the server may accept: an Item of printable ASCII (after HTTP's whitespace trim) that parses. */
    private static boolean wellFormedForTheLease(byte[] value) {
        String text = new String(value, StandardCharsets.ISO_8859_1).replaceAll("^[ \t]+|[ \t]+$", "");
        if (!text.chars().allMatch(c -> c >= 0x20 && c <= 0x7E)) {
            return false;
        }
        try {
            FencingToken token = FencingTokenHeader.parse(text);
            return token.lease().equals("invoice-900");
        }
        catch (IllegalArgumentException malformed) {
            return false;
        }
    }

    private static byte[] mutate(Random random) {
        StringBuilder value = new StringBuilder(VALID);
        int edits = 1 + random.nextInt(4);
        String pool = "0123456789;=\"\\%:,.?@*- \tabcLEASE\u0000\u0001\u001f\u007f\u0080\u00e9\u00ff";
        for (int e = 0; e < edits; e++) {
            int at = value.isEmpty() ? 0 : random.nextInt(value.length() + 1);
            switch (random.nextInt(5)) {
                case 0 -> value.insert(at, pool.charAt(random.nextInt(pool.length())));
                case 1 -> {
                    if (at < value.length()) {
                        value.deleteCharAt(at);
                    }
                }
                case 2 -> {
                    if (at < value.length()) {
                        value.setCharAt(at, pool.charAt(random.nextInt(pool.length())));
                    }
                }
                case 3 -> value.setLength(Math.min(value.length(), at));
                default -> value.insert(at, value.substring(random.nextInt(value.length() + 1)));
            }
        }
        return value.toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    /** One HTTP/1.1 request with the value as raw bytes; the status code of the answer. */
    private static int post(byte[] value) throws IOException {
        try (Socket socket = new Socket(base.getHost(), base.getPort())) {
            socket.setSoTimeout(30_000);
            ByteArrayOutputStream request = new ByteArrayOutputStream();
            request.writeBytes(("POST /payments/900 HTTP/1.1\r\nHost: " + base.getHost() + "\r\nContent-Length: 0\r\n"
                    + "Connection: close\r\n" + FencingTokenHeader.NAME + ": ").getBytes(StandardCharsets.US_ASCII));
            request.writeBytes(value);
            request.writeBytes("\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            OutputStream out = socket.getOutputStream();
            out.write(request.toByteArray());
            out.flush();
            InputStream in = socket.getInputStream();
            String statusLine = new String(in.readNBytes(12), StandardCharsets.US_ASCII);
            assertThat(statusLine).startsWith("HTTP/1.1 ");
            return Integer.parseInt(statusLine.substring(9, 12));
        }
    }

    private static String shown(byte[] value) {
        StringBuilder out = new StringBuilder();
        for (byte b : value) {
            int c = b & 0xFF;
            out.append(c >= 0x20 && c <= 0x7E ? String.valueOf((char) c) : String.format("\\x%02x", c));
        }
        return out.toString();
    }
}
