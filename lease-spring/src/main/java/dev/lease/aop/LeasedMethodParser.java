package dev.lease.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.format.annotation.DurationFormat;
import org.springframework.format.datetime.standard.DurationFormatterUtils;
import org.springframework.util.StringValueResolver;

import dev.lease.Leased;
import dev.lease.WhenBusy;
import dev.lease.LeaseConfigurationException;
import dev.lease.spi.LeaseNames;

/**
 * Turns a {@link Leased} annotation into a {@link LeasedMethod}, failing with a message that names the method, the
 * lease and the attribute for anything wrong that can be seen before the first call.
 */
final class LeasedMethodParser {

    private final StringValueResolver placeholders;
    private final ParameterNameDiscoverer parameterNames;

    /** @param parameterNames the discoverer the templates are evaluated with, so both agree on what is defined */
    LeasedMethodParser(StringValueResolver placeholders, ParameterNameDiscoverer parameterNames) {
        this.placeholders = placeholders;
        this.parameterNames = parameterNames;
    }

    /** @param async whether the method runs behind an {@code @Async} hand-off, with the lease inside it */
    LeasedMethod parse(Method method, Leased leased, boolean async) {
        String where = LeasedMethod.culprit(method, "'" + LeaseNames.printable(leased.name()) + "'");
        NameTemplate name = NameTemplate.parse(where, "name", leased.name(), LeaseNames::validate, "nightly-report",
                "invoice-#{#id}").checkVariables(where, "name", method, parameterNames);
        NameTemplate fence = leased.fence().isEmpty() ? null
                : NameTemplate.parse(where, "fence", leased.fence(), NameTemplate::checkNotBlank, "invoice-42",
                        "invoice-#{#id}").checkVariables(where, "fence", method, parameterNames);
        Class<?> returnType = method.getReturnType();
        boolean reactive = ReactiveTypes.isReactive(method);
        if (reactive && async) {
            throw new LeaseConfigurationException(where + (SuspendFunctions.is(method) ? " is a Kotlin suspend function"
                    : ": the method returns " + returnType.getSimpleName()) + " and is @Async: the lease is held while "
                    + "its work is subscribed to, not on an executor thread.", "drop @Async (subscribe on a scheduler "
                            + "instead: publishOn/subscribeOn, or a coroutine dispatcher).");
        }
        SuspendFunctions.check(where, method, leased.whenBusy() == WhenBusy.SKIP);
        boolean future = AsyncResults.isFuture(returnType);
        // Behind @Async the lease is taken on the executor thread, so a future-returning body runs under it.
        if (!reactive && AsyncResults.isAsynchronous(returnType) && !(async && future)) {
            throw new LeaseConfigurationException(where + ": the method returns " + returnType.getSimpleName()
                    + ", so the lease would be released as soon as the work is handed off, long before it finishes.",
                    "put @Leased on the method that does the work synchronously (for example inside the async task)"
                            + (future ? ", or make this method @Async: the lease is then held on the executor "
                                    + "thread for the whole body." : ", or return Mono or Flux (or make it a Kotlin "
                                            + "suspend function), whose work is held under the lease until it ends."));
        }
        Supplier<Object> skipValue = skipValue(where, returnType, leased.whenBusy());
        return new LeasedMethod(method, name, leased.kind(), duration(where, "ttl", leased.ttl()),
                duration(where, "renewEvery", leased.renewEvery()),
                Optional.ofNullable(duration(where, "waitFor", leased.waitFor())).orElse(Duration.ZERO),
                leased.whenBusy(), skipValue, async, fence,
                Optional.ofNullable(duration(where, "holdAtLeast", leased.holdAtLeast())).orElse(Duration.ZERO));
    }

    private Duration duration(String where, String attribute, String text) {
        if (text.isEmpty()) {
            return null;
        }
        String resolved;
        try {
            resolved = placeholders.resolveStringValue(text);
        }
        catch (IllegalArgumentException ex) {
            throw new LeaseConfigurationException(where + ": " + attribute + " = \"" + text
                    + "\" has a placeholder that cannot be resolved (" + ex.getMessage() + ").",
                    "define the property, or give the placeholder a default: \"${my.ttl:30s}\".");
        }
        Duration duration;
        try {
            duration = parseDuration(resolved.trim());
        }
        catch (RuntimeException ex) {
            throw new LeaseConfigurationException(where + ": " + attribute + " = \"" + text + "\""
                    + (resolved.equals(text) ? "" : " (resolved to \"" + resolved + "\")") + " is not a duration.",
                    "write it like \"30s\", \"500ms\", \"2m\" or \"PT30S\".");
        }
        // A wait or a hold of zero means none; a ttl or renewal interval of zero means nothing.
        boolean zeroMeansNone = attribute.equals("waitFor") || attribute.equals("holdAtLeast");
        if (duration.isNegative() || (duration.isZero() && !zeroMeansNone)) {
            throw new LeaseConfigurationException(where + ": " + attribute + " = \"" + text + "\""
                    + (resolved.equals(text) ? "" : " (resolved to \"" + resolved + "\")")
                    + (zeroMeansNone ? " is negative." : " must be positive."),
                    zeroMeansNone ? "use a duration such as \"4s\", or leave " + attribute + " out for none."
                            : "use a positive duration such as \"30s\".");
        }
        return duration;
    }

    /**
     * The syntax of Spring Boot's duration properties ({@code lease.*}): a whole number with an optional unit
     * ({@code 500ms}, {@code 30s}, {@code 2m}; {@code ns}, {@code us}, {@code ms}, {@code s}, {@code m}, {@code h},
     * {@code d}, in any case; milliseconds without one), or ISO-8601 ({@code PT30S}). Spring Framework's composite style
     * ({@code 1h30m}) is refused, as Boot refuses it in properties, so that a value moves between the two unchanged.
     */
    private static Duration parseDuration(String text) {
        DurationFormat.Style style = DurationFormatterUtils.detect(text);
        if (style == DurationFormat.Style.COMPOSITE) {
            throw new IllegalArgumentException("'" + text + "' is in the composite style, which properties refuse");
        }
        return DurationFormatterUtils.parse(text, style);
    }

    static Supplier<Object> skipValue(String where, Class<?> returnType, WhenBusy whenBusy) {
        if (returnType == Optional.class) {
            return Optional::empty;
        }
        if (AsyncResults.isFuture(returnType) && returnType.isAssignableFrom(CompletableFuture.class)) {
            // The @Async hand-off unwraps it, so the caller's future completes with null.
            return () -> CompletableFuture.completedFuture(null);
        }
        if (whenBusy == WhenBusy.SKIP && returnType.isPrimitive() && returnType != void.class) {
            throw new LeaseConfigurationException(where + ": whenBusy = SKIP but the method returns "
                    + returnType.getName() + ", which cannot express \"skipped\".",
                    "return void, an object (null when skipped) or Optional (empty when skipped), or use "
                            + "whenBusy = THROW.");
        }
        return () -> null;
    }
}
