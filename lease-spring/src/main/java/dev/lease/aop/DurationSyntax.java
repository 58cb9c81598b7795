package dev.lease.aop;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The duration syntax of {@code @Leased} attributes, the same as Spring Boot's for {@code lease.*} properties (its
 * {@code DurationStyle.detectAndParse}), without depending on Spring Boot: a whole number with an optional unit
 * ({@code 500ms}, {@code 30s}, {@code 2m}; {@code ns}, {@code us}, {@code ms}, {@code s}, {@code m}, {@code h},
 * {@code d}, in any case; milliseconds without one), or ISO-8601 ({@code PT30S}).
 */
final class DurationSyntax {

    private static final Pattern SIMPLE = Pattern.compile("^([+-]?\\d+)([a-zA-Z]{0,2})$");
    private static final Pattern ISO_8601 = Pattern.compile("^[+-]?[pP].*$");

    private DurationSyntax() {
    }

    /**
     * Parses {@code text}.
     *
     * @throws IllegalArgumentException when it is not a duration in either syntax
     */
    static Duration parse(String text) {
        Matcher simple = SIMPLE.matcher(text);
        if (simple.matches()) {
            try {
                return Duration.of(Long.parseLong(simple.group(1)), unit(simple.group(2)));
            }
            catch (RuntimeException ex) {
                throw new IllegalArgumentException("'" + text + "' is not a valid simple duration", ex);
            }
        }
        if (ISO_8601.matcher(text).matches()) {
            try {
                return Duration.parse(text);
            }
            catch (RuntimeException ex) {
                throw new IllegalArgumentException("'" + text + "' is not a valid ISO-8601 duration", ex);
            }
        }
        throw new IllegalArgumentException("'" + text + "' is not a valid duration");
    }

    private static ChronoUnit unit(String suffix) {
        return switch (suffix.toLowerCase(Locale.ROOT)) {
            case "" -> ChronoUnit.MILLIS;
            case "ns" -> ChronoUnit.NANOS;
            case "us" -> ChronoUnit.MICROS;
            case "ms" -> ChronoUnit.MILLIS;
            case "s" -> ChronoUnit.SECONDS;
            case "m" -> ChronoUnit.MINUTES;
            case "h" -> ChronoUnit.HOURS;
            case "d" -> ChronoUnit.DAYS;
            default -> throw new IllegalArgumentException("Unknown unit '" + suffix + "'");
        };
    }
}
