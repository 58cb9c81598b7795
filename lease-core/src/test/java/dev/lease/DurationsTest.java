package dev.lease;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;

class DurationsTest {

    @Test
    void wholeValuesUseTheLargestUnitThatKeepsThemWhole() {
        assertThat(Durations.format(Duration.ofMinutes(5))).isEqualTo("5m");
        assertThat(Durations.format(Duration.ofSeconds(30))).isEqualTo("30s");
        assertThat(Durations.format(Duration.ofSeconds(90))).isEqualTo("90s");
        assertThat(Durations.format(Duration.ofMillis(1500))).isEqualTo("1500ms");
        assertThat(Durations.format(Duration.ofHours(2))).isEqualTo("2h");
        assertThat(Durations.format(Duration.ofDays(1))).isEqualTo("1d");
        assertThat(Durations.format(Duration.ZERO)).isEqualTo("0s");
        assertThat(Durations.format(Duration.ofSeconds(-3))).isEqualTo("-3s");
    }

    @Test
    void otherValuesAreExactDecimals() {
        assertThat(Durations.format(Duration.ofSeconds(10).dividedBy(3))).isEqualTo("3.333333333s");
        assertThat(Durations.format(Duration.ofNanos(2_500_000))).isEqualTo("2.5ms");
        assertThat(Durations.format(Duration.ofNanos(1))).isEqualTo("0.000001ms");
    }

    @Test
    void measuredTimesAreCutToTheMillisecond() {
        assertThat(Durations.formatNanos(2_999_999)).isEqualTo("2ms");
        assertThat(Durations.formatNanos(999_999)).isEqualTo("0s");
    }
}
