package dev.lease.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Duration;
import java.util.Optional;

import org.junit.jupiter.api.Test;

class BackendTraitsTest {

    @Test
    void startsFromThePlainestBackend() {
        for (BackendTraits traits : new BackendTraits[] {BackendTraits.fenced(), BackendTraits.unfenced("why")}) {
            assertThat(traits.renewsInOneCall()).isFalse();
            assertThat(traits.boundsCallsByDeadline()).isFalse();
            assertThat(traits.maxTtl()).isEmpty();
            assertThat(traits.validityMargin(Duration.ofMinutes(5))).isZero();
        }
        assertThat(BackendTraits.fenced().issuesFencingTokens()).isTrue();
        assertThat(BackendTraits.fenced().whyNotFenced()).isEmpty();
        assertThat(BackendTraits.unfenced("no token").issuesFencingTokens()).isFalse();
        assertThat(BackendTraits.unfenced("no token").whyNotFenced()).contains("no token");
    }

    @Test
    void eachWitherChangesItsTraitAndKeepsTheOthers() {
        BackendTraits traits = BackendTraits.unfenced("why")
                .withRenewsInOneCall(true)
                .withBoundsCallsByDeadline(true)
                .withMaxTtl(Duration.ofSeconds(40))
                .withValidityMargin(0.01, Duration.ofMillis(2));
        assertThat(traits).isEqualTo(new BackendTraits(Optional.of("why"), true, true, Optional.of(Duration.ofSeconds(40)),
                0.01, Duration.ofMillis(2)));
        assertThat(traits.withRenewsInOneCall(false)).isEqualTo(new BackendTraits(Optional.of("why"), false, true,
                Optional.of(Duration.ofSeconds(40)), 0.01, Duration.ofMillis(2)));
        assertThat(traits.withBoundsCallsByDeadline(false)).isEqualTo(new BackendTraits(Optional.of("why"), true, false,
                Optional.of(Duration.ofSeconds(40)), 0.01, Duration.ofMillis(2)));
        assertThat(traits.withMaxTtl(Duration.ofSeconds(9))).isEqualTo(new BackendTraits(Optional.of("why"), true, true,
                Optional.of(Duration.ofSeconds(9)), 0.01, Duration.ofMillis(2)));
        assertThat(traits.withValidityMargin(0, Duration.ZERO)).isEqualTo(new BackendTraits(Optional.of("why"), true,
                true, Optional.of(Duration.ofSeconds(40)), 0, Duration.ZERO));
    }

    /** Redlock's margin, ttl × drift + 2 ms, to the nanosecond as its backend computed it before it became a value. */
    @Test
    void theValidityMarginGrowsWithTheTtlAndAddsItsFixedPart() {
        BackendTraits redlock = BackendTraits.unfenced("why").withValidityMargin(0.01, Duration.ofMillis(2));
        assertThat(redlock.validityMargin(Duration.ofSeconds(10))).isEqualTo(Duration.ofMillis(102));
        long ttl = 1_234_567_891L;
        assertThat(redlock.validityMargin(Duration.ofNanos(ttl)))
                .isEqualTo(Duration.ofNanos((long) (ttl * 0.01) + 2_000_000L));
        assertThat(BackendTraits.fenced().withValidityMargin(0.1, Duration.ZERO).validityMargin(Duration.ofSeconds(3)))
                .isEqualTo(Duration.ofMillis(300));
    }

    @Test
    void refusesValuesThatMakeNoSense() {
        assertThatIllegalArgumentException().isThrownBy(() -> BackendTraits.unfenced(" "))
                .withMessageContaining("must say why");
        for (double factor : new double[] {-0.01, 1, Double.NaN, Double.POSITIVE_INFINITY}) {
            assertThatIllegalArgumentException()
                    .isThrownBy(() -> BackendTraits.fenced().withValidityMargin(factor, Duration.ZERO))
                    .withMessageContaining("validityMarginFactor " + factor);
        }
        assertThatIllegalArgumentException()
                .isThrownBy(() -> BackendTraits.fenced().withValidityMargin(0, Duration.ofMillis(-1)))
                .withMessageContaining("validityMarginFixed");
        for (Duration ttl : new Duration[] {Duration.ZERO, Duration.ofSeconds(-1)}) {
            assertThatIllegalArgumentException().isThrownBy(() -> BackendTraits.fenced().withMaxTtl(ttl))
                    .withMessageContaining("maxTtl");
        }
    }
}
