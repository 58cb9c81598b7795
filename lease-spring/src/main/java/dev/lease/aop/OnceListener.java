package dev.lease.aop;

/**
 * Told of every {@code @Once} call that ran or was skipped, such as the auto-configuration's {@code lease.once}
 * counter. Beans of this type are found by {@link OnceAnnotationBeanPostProcessor} when the first call is made.
 */
@FunctionalInterface
public interface OnceListener {

    /**
     * One call's outcome.
     *
     * @param declaredKey the key as written in the annotation, such as {@code report-#{period}}: a tag of low
     *        cardinality
     * @param key the evaluated key
     * @param ran whether the body ran (false: its key was committed before, and it was skipped)
     */
    void completed(String declaredKey, String key, boolean ran);
}
