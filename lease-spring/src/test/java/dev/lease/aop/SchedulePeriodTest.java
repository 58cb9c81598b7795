package dev.lease.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.Optional;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.support.CronExpression;

import dev.lease.LeaseConfigurationException;
import dev.lease.Once;

class SchedulePeriodTest {

    private static final ZoneId PARIS = ZoneId.of("Europe/Paris");

    /**
     * Over two days around each daylight saving change of Paris, at every 7 minutes and 13 seconds: the period is a
     * fire time of the cron at or before now, and the cron's next fire after it is after now.
     */
    @ParameterizedTest
    @ValueSource(strings = {"0 */15 * * * *", "0 30 2 * * *", "0 0 * * * *", "17 3 1-3 * * *", "@daily",
            "0 0 9 * * MON-FRI"})
    void aCronsPeriodIsItsLatestFireAtOrBeforeNowAcrossDaylightSavingChanges(String expression) {
        CronExpression cron = CronExpression.parse(expression);
        SchedulePeriod.Cron period = new SchedulePeriod.Cron(cron, PARIS);
        for (String day : new String[] {"2026-03-28T12:00:00+01:00", "2026-10-24T12:00:00+02:00"}) {
            ZonedDateTime start = OffsetDateTime.parse(day).atZoneSameInstant(PARIS);
            for (ZonedDateTime now = start; now.isBefore(start.plusDays(2)); now = now.plusSeconds(1033)) {
                ZonedDateTime previous = period.previous(now);
                assertThat(previous).as("previous fire at %s", now).isBeforeOrEqualTo(now);
                assertThat(cron.next(previous.minusNanos(1))).as("a fire of the cron").isEqualTo(previous);
                assertThat(cron.next(previous)).as("no fire between it and %s", now).isAfter(now);
            }
        }
    }

    @Test
    void aCronsPeriodIsTheLocalTimeOfItsFireInTheCronsZone() {
        SchedulePeriod hourly = new SchedulePeriod.Cron(CronExpression.parse("0 0 * * * *"), PARIS);
        // 2026-03-29: 02:00 does not exist in Paris, the clocks go from 02:00 to 03:00.
        assertThat(hourly.at(Instant.parse("2026-03-29T01:10:00Z"))).isEqualTo("2026-03-29T03:00:00");
        assertThat(hourly.at(Instant.parse("2026-03-29T00:59:59Z"))).isEqualTo("2026-03-29T01:00:00");
        // 2026-10-25: 02:00 to 03:00 is lived twice; both of its hourly fires name the same local time.
        assertThat(hourly.at(Instant.parse("2026-10-25T00:30:00Z"))).isEqualTo("2026-10-25T02:00:00");
        assertThat(hourly.at(Instant.parse("2026-10-25T01:30:00Z"))).isEqualTo("2026-10-25T02:00:00");
        assertThat(hourly.at(Instant.parse("2026-10-25T02:00:00Z"))).isEqualTo("2026-10-25T03:00:00");
        // A fire time is its own period, to the second.
        assertThat(new SchedulePeriod.Cron(CronExpression.parse("*/10 * * * * *"), ZoneId.of("UTC"))
                .at(Instant.parse("2026-12-06T10:00:20Z"))).isEqualTo("2026-12-06T10:00:20");
    }

    @Test
    void aFixedRatesPeriodIsTheStartOfItsWindowSinceTheEpochInUtc() {
        SchedulePeriod fiveSeconds = new SchedulePeriod.Window(Duration.ofSeconds(5));
        assertThat(fiveSeconds.at(Instant.parse("2026-12-06T10:00:00Z"))).isEqualTo("2026-12-06T10:00:00");
        assertThat(fiveSeconds.at(Instant.parse("2026-12-06T10:00:04.999Z"))).isEqualTo("2026-12-06T10:00:00");
        assertThat(fiveSeconds.at(Instant.parse("2026-12-06T10:00:05Z"))).isEqualTo("2026-12-06T10:00:05");
        assertThat(new SchedulePeriod.Window(Duration.ofHours(1)).at(Instant.parse("2026-12-06T10:59:59Z")))
                .isEqualTo("2026-12-06T10:00:00");
    }

    @Test
    void theScheduledAnnotationGivesThePeriodWithItsPlaceholdersAndUnit() throws Exception {
        SchedulePeriod rate = SchedulePeriod.of(Jobs.class.getMethod("everyMinute"), value -> value, "here");
        assertThat(rate).isEqualTo(new SchedulePeriod.Window(Duration.ofMinutes(1)));
        SchedulePeriod delay = SchedulePeriod.of(Jobs.class.getMethod("delayString"),
                value -> value.replace("${delay}", "PT10S"), "here");
        assertThat(delay).isEqualTo(new SchedulePeriod.Window(Duration.ofSeconds(10)));
        SchedulePeriod cron = SchedulePeriod.of(Jobs.class.getMethod("nightly"), value -> value, "here");
        assertThat(cron).isEqualTo(new SchedulePeriod.Cron(CronExpression.parse("0 0 2 * * *"), PARIS));
        assertThat(SchedulePeriod.of(Jobs.class.getMethod("unscheduled", String.class), value -> value, "here"))
                .isNull();
    }

    @Test
    void aTriggerWithoutAPeriodIsRefusedNamingTheMethod() {
        OnceMethods methods = new OnceMethods(value -> value, null, Clock.systemUTC());
        assertThatThrownBy(() -> methods.inspect(Jobs.class)).isInstanceOf(LeaseConfigurationException.class);
        assertThatThrownBy(() -> methods.find(Bad.class.getMethod("noSchedule"), Bad.class))
                .isInstanceOf(LeaseConfigurationException.class)
                .hasMessageContaining("@Once on Bad.noSchedule() (key 'a-#{period}')")
                .hasMessageContaining("has no @Scheduled");
        assertThatThrownBy(() -> methods.find(Bad.class.getMethod("subSecond"), Bad.class))
                .isInstanceOf(LeaseConfigurationException.class).hasMessageContaining("500 ms");
        assertThatThrownBy(() -> methods.find(Bad.class.getMethod("disabled"), Bad.class))
                .isInstanceOf(LeaseConfigurationException.class).hasMessageContaining("disabled");
        assertThatThrownBy(() -> methods.find(Bad.class.getMethod("primitive"), Bad.class))
                .isInstanceOf(LeaseConfigurationException.class).hasMessageContaining("cannot express");
        assertThatThrownBy(() -> methods.find(Bad.class.getMethod("unknownArgument", String.class), Bad.class))
                .isInstanceOf(LeaseConfigurationException.class).hasMessageContaining("#nope");
    }

    @Test
    void keysAreEvaluatedOverTheArgumentsAndThePeriod() throws Exception {
        Clock clock = Clock.fixed(Instant.parse("2026-12-06T10:00:42Z"), ZoneId.of("UTC"));
        OnceMethods methods = new OnceMethods(value -> value, null, clock);
        Good good = new Good();
        OnceMethod rate = methods.find(Good.class.getMethod("everyMinute"), Good.class).orElseThrow();
        assertThat(methods.evaluateKey(rate, new Object[0], good)).isEqualTo("report-2026-12-06T10:00:00");
        OnceMethod byArgument = methods.find(Good.class.getMethod("unscheduled", String.class), Good.class)
                .orElseThrow();
        assertThat(methods.evaluateKey(byArgument, new Object[] {"7"}, good)).isEqualTo("invoice-7");
        assertThat(byArgument.skipValue().get()).isEqualTo(Optional.empty());
    }

    static class Jobs {

        @Scheduled(fixedRate = 1, timeUnit = java.util.concurrent.TimeUnit.MINUTES)
        @Once(key = "report-#{period}")
        public void everyMinute() {
        }

        @Scheduled(fixedDelayString = "${delay}")
        public void delayString() {
        }

        @Scheduled(cron = "0 0 2 * * *", zone = "Europe/Paris")
        public void nightly() {
        }

        public void unscheduled(String id) {
        }

        @Once(key = "x")
        private void hidden() {
        }
    }

    static class Good {

        @Scheduled(fixedRate = 60_000)
        @Once(key = "report-#{period}")
        public void everyMinute() {
        }

        @Once(key = "invoice-#{#id}")
        public Optional<String> unscheduled(String id) {
            return Optional.of(id);
        }
    }

    static class Bad {

        @Once(key = "a-#{period}")
        public void noSchedule() {
        }

        @Scheduled(fixedRate = 500)
        @Once(key = "a-#{period}")
        public void subSecond() {
        }

        @Scheduled(cron = "-")
        @Once(key = "a-#{period}")
        public void disabled() {
        }

        @Once(key = "a")
        public int primitive() {
            return 1;
        }

        @Once(key = "a-#{#nope}")
        public void unknownArgument(String id) {
        }
    }
}
