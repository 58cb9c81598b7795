package dev.lease.aop;

import java.lang.reflect.Method;
import java.util.function.Supplier;

/**
 * Everything about one {@code @Once} method that can be known before it is called, parsed once.
 *
 * @param method the annotated method
 * @param key the key, literal or template
 * @param period the method's {@code @Scheduled} period, or null when it has none
 * @param skipValue what a skipped call returns
 */
record OnceMethod(Method method, NameTemplate key, SchedulePeriod period, Supplier<Object> skipValue) {

    /** How startup errors begin: {@code @Once on Reports.nightly() (key 'nightly-#{period}')}. */
    String culprit() {
        return culprit(method, key.describe());
    }

    static String culprit(Method method, String quotedKey) {
        return "@Once on " + LeasedMethod.describe(method) + " (key " + quotedKey + ")";
    }
}
