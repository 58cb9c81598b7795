package dev.lease.fence.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.lease.LeaseConfigurationException;
import dev.lease.sql.SqlDialect;

/** The values {@link FenceColumnIntegrator#IDLE_TIMEOUT_PROPERTY} takes, from the starter or set by hand. */
class IdleTimeoutSettingTest {

    private static Duration bound(Object value) {
        return IdleTimeout.of(SqlDialect.POSTGRESQL, value).bound();
    }

    @Test
    void absentIsSixtySecondsAndEachFormReadsAsItSays() {
        assertThat(bound(null)).isEqualTo(Duration.ofSeconds(60));
        assertThat(bound(Duration.ofMillis(1500))).isEqualTo(Duration.ofMillis(1500));
        assertThat(bound(7)).isEqualTo(Duration.ofSeconds(7));
        assertThat(bound("7")).isEqualTo(Duration.ofSeconds(7));
        assertThat(bound("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(bound(" 2m ")).isEqualTo(Duration.ofMinutes(2));
        assertThat(bound("PT1H")).isEqualTo(Duration.ofHours(1));
        assertThat(bound("0")).isZero();
    }

    @ParameterizedTest
    @ValueSource(strings = {"-1s", "PT-1S", "soon"})
    void aNegativeOrUnreadableBoundFailsTheStartupNamingTheSetting(String value) {
        assertThatThrownBy(() -> bound(value)).isInstanceOf(LeaseConfigurationException.class)
                .hasMessageContaining(FenceColumnIntegrator.IDLE_TIMEOUT_PROPERTY).hasMessageContaining(value)
                .hasMessageContaining("lease.fence.idle-timeout");
    }
}
