package dev.lease.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.format.datetime.standard.DurationFormatterUtils;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.annotation.Schedules;
import org.springframework.scheduling.support.CronExpression;
import org.springframework.util.StringValueResolver;

import dev.lease.LeaseConfigurationException;

/**
 * {@code #{period}} of a {@code @Once} key: the nominal time of the current tick of the method's {@code @Scheduled}
 * trigger, so that instances whose clocks differ by less than the period name the same tick alike. For a cron, the
 * latest fire time at or before now in the cron's zone; for a fixed rate or delay, the start of the current window
 * of that length since the epoch, in UTC. ISO-8601 local date-time without fraction.
 */
sealed interface SchedulePeriod {

    DateTimeFormatter FORMAT = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss");

    /** The period's name for the tick {@code now} belongs to. */
    String at(Instant now);

    /**
     * The period of the method's single {@code @Scheduled} trigger, its placeholders resolved.
     *
     * @param where how startup errors begin
     * @return the period, or null when the method has no {@code @Scheduled}
     * @throws LeaseConfigurationException when the trigger has no period: several triggers, a disabled cron
     *         ({@code "-"}), a one-time task, a window under a second
     */
    static SchedulePeriod of(Method method, StringValueResolver placeholders, String where) {
        Set<Scheduled> triggers = AnnotatedElementUtils.getMergedRepeatableAnnotations(method, Scheduled.class,
                Schedules.class);
        if (triggers.isEmpty()) {
            return null;
        }
        if (triggers.size() > 1) {
            throw refused(where, "the method has " + triggers.size() + " @Scheduled triggers, so a call does not tell "
                    + "which one's tick it is", "keep one @Scheduled on the method, or build the key without "
                            + "#{period}.");
        }
        Scheduled scheduled = triggers.iterator().next();
        String cron = placeholders.resolveStringValue(scheduled.cron());
        if (cron != null && !cron.isEmpty()) {
            if (Scheduled.CRON_DISABLED.equals(cron)) {
                throw refused(where, "its cron is disabled (\"-\"), so it has no ticks", "give the cron a schedule, "
                        + "or build the key without #{period}.");
            }
            String zone = placeholders.resolveStringValue(scheduled.zone());
            return new Cron(CronExpression.parse(cron),
                    zone == null || zone.isEmpty() ? ZoneId.systemDefault() : ZoneId.of(zone));
        }
        Duration window = window(scheduled.fixedRate(), scheduled.fixedRateString(), scheduled.timeUnit(),
                placeholders);
        if (window == null) {
            window = window(scheduled.fixedDelay(), scheduled.fixedDelayString(), scheduled.timeUnit(), placeholders);
        }
        if (window == null) {
            throw refused(where, "its @Scheduled runs once, so it has no period", "build the key without #{period}.");
        }
        if (window.compareTo(Duration.ofSeconds(1)) < 0) {
            throw refused(where, "its period is " + window.toMillis() + " ms, but #{period} names a tick to the "
                    + "second, so every tick within a second would share one key", "schedule it a second apart or "
                            + "more, or build the key without #{period}.");
        }
        return new Window(window);
    }

    private static Duration window(long value, String text, TimeUnit unit, StringValueResolver placeholders) {
        if (value >= 0) {
            return Duration.of(value, unit.toChronoUnit());
        }
        String resolved = placeholders.resolveStringValue(text);
        if (resolved == null || resolved.isEmpty()) {
            return null;
        }
        try {
            return Duration.of(Long.parseLong(resolved.trim()), unit.toChronoUnit());
        }
        catch (NumberFormatException ex) {
            return DurationFormatterUtils.detectAndParse(resolved.trim());
        }
    }

    private static LeaseConfigurationException refused(String where, String why, String fix) {
        return new LeaseConfigurationException(where + ": #{period} is refused: " + why + ".", fix);
    }

    /**
     * A cron trigger: its latest fire time at or before now. Spring's {@link CronExpression} only looks forward, so
     * the fire time is found by looking back from now for a time whose next fire is still at or before now, then
     * halving the gap to the fire: fires fall on whole seconds, so within a second of it the next fire is the one.
     * Times move on the instant line, as the trigger does, so a daylight saving change neither skips nor repeats a
     * step of the search.
     */
    record Cron(CronExpression cron, ZoneId zone) implements SchedulePeriod {

        /** A cron's fires are at most some years apart (29 February on a given weekday): looking further fails. */
        private static final Duration LONGEST_LOOK_BACK = Duration.ofDays(366L * 30);

        @Override
        public String at(Instant now) {
            return FORMAT.format(previous(ZonedDateTime.ofInstant(now, zone)));
        }

        /** The latest fire time at or before {@code now}. */
        ZonedDateTime previous(ZonedDateTime now) {
            Duration back = Duration.ofSeconds(1);
            ZonedDateTime earlier = now.minus(back);
            while (!firesBy(earlier, now)) {
                if (back.compareTo(LONGEST_LOOK_BACK) > 0) {
                    throw new IllegalStateException("The cron '" + cron + "' did not fire in the "
                            + LONGEST_LOOK_BACK.toDays() + " days before " + now + ", so #{period} has no tick");
                }
                back = back.multipliedBy(2);
                earlier = now.minus(back);
            }
            // A fire lies in (earlier, now]; none lies in (later, now].
            ZonedDateTime later = now;
            while (Duration.between(earlier, later).compareTo(Duration.ofSeconds(1)) > 0) {
                ZonedDateTime middle = earlier.plus(Duration.between(earlier, later).dividedBy(2));
                if (firesBy(middle, now)) {
                    earlier = middle;
                }
                else {
                    later = middle;
                }
            }
            return cron.next(earlier).truncatedTo(ChronoUnit.SECONDS);
        }

        /** Whether the cron fires after {@code from} and at or before {@code now}. */
        private boolean firesBy(ZonedDateTime from, ZonedDateTime now) {
            ZonedDateTime next = cron.next(from);
            return next != null && !next.isAfter(now);
        }
    }

    /** A fixed rate or delay: the start of the current window of that length since the epoch, in UTC. */
    record Window(Duration length) implements SchedulePeriod {

        @Override
        public String at(Instant now) {
            long millis = length.toMillis();
            long start = Math.floorDiv(now.toEpochMilli(), millis) * millis;
            return FORMAT.format(LocalDateTime.ofInstant(Instant.ofEpochMilli(start), ZoneOffset.UTC));
        }
    }
}
