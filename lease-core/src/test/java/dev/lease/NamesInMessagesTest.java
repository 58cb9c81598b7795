package dev.lease;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;

import dev.lease.spi.LeaseNames;

/**
 * Whoever chooses the {@code #{#id}} of a name template chooses part of a name, and names are echoed in exceptions
 * and log lines: no message may carry a character that starts a new line or prints as something else. Seeded: the
 * seed is printed, and {@code -Dlease-test.names-seed} replays it.
 */
class NamesInMessagesTest {

    /** Line breaks, C0 and C1 controls, separators, bidi overrides and isolates, invisible characters, surrogates. */
    private static final char[] HOSTILE = {'\r', '\n', '\t', '\u0000', '\u001B', '\u0085', '\u2028', '\u2029', '\u202E',
        '\u202D', '\u2066', '\u2069', '\u200E', '\u200B', '\u2060', '\uFEFF', '\u00AD', '\u061C', '\uD800', '\uDFFF'};

    @Test
    void noMessageThatEchoesANameCarriesAHostileCharacter() {
        long seed = Long.getLong("lease-test.names-seed", new Random().nextLong());
        System.out.println("NamesInMessagesTest seed " + seed + " (replay: -Dlease-test.names-seed=" + seed + ")");
        Random random = new Random(seed);
        for (int i = 0; i < 2_000; i++) {
            String name = hostileName(random);
            for (Supplier<String> message : messagesEchoing(name)) {
                String text = message.get();
                assertThat(LeaseNames.printable(text)).as("seed %d, name %s", seed, LeaseNames.printable(name))
                        .isEqualTo(text);
            }
        }
    }

    private static String hostileName(Random random) {
        StringBuilder name = new StringBuilder("invoice-");
        int parts = 1 + random.nextInt(4);
        for (int p = 0; p < parts; p++) {
            name.append(random.nextInt(1000)).append(HOSTILE[random.nextInt(HOSTILE.length)]);
        }
        return name.append("WARN forged line").toString();
    }

    private static List<Supplier<String>> messagesEchoing(String name) {
        FencingToken token = new FencingToken(name, 7);
        List<Supplier<String>> messages = new ArrayList<>();
        messages.add(() -> thrown(() -> LeaseNames.validate(name)));
        messages.add(() -> new LeaseLostException(name, token, "renewal failed", null).getMessage());
        messages.add(() -> new LeaseUnavailableException(name, Duration.ofSeconds(1), "zookeeper").getMessage());
        messages.add(() -> new LeaseUnavailableException(name, Duration.ofSeconds(1), "zookeeper",
                new IllegalStateException("down")).getMessage());
        messages.add(() -> new LeaseUnavailableException(name, Duration.ofSeconds(1), "zookeeper",
                new InterruptedException()).getMessage());
        messages.add(() -> new LeaseUnavailableException(name, "zookeeper", "shutting down").getMessage());
        messages.add(() -> thrown(() -> token.compareTo(new FencingToken("other", 1))));
        messages.add(() -> thrown(() -> LeaseSpec.of(name, LeaseKind.CORRECTNESS).withWaitFor(Duration.ofSeconds(-1))));
        messages.add(() -> thrown(() -> LeaseSpec.of(name, LeaseKind.EFFICIENCY).withFence("invoice")));
        return messages;
    }

    private static String thrown(Runnable call) {
        try {
            call.run();
        }
        catch (RuntimeException ex) {
            return ex.getMessage();
        }
        throw new AssertionError("expected a refusal");
    }
}
