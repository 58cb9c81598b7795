package dev.lease.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import javax.xml.parsers.DocumentBuilderFactory;

import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * The Maven identity of one class path entry and its declared dependencies, read from its pom: a reactor module's
 * {@code pom.xml} beside {@code target/classes}, or the {@code .pom} beside a jar of the local repository.
 *
 * @param id {@code groupId:artifactId}
 * @param dependencies what the pom declares, without dependency management and without test scope
 */
record MavenCoordinates(String id, List<Dependency> dependencies) {

    /**
     * One declared dependency.
     *
     * @param id {@code groupId:artifactId}
     * @param optional whether it is optional or provided: an application may lack it
     */
    record Dependency(String id, boolean optional) {
    }

    /** The coordinates of {@code entry}, or null when no pom is found beside it. */
    static MavenCoordinates of(Path entry) {
        Path pom;
        if (isModuleOutput(entry)) {
            pom = entry.toAbsolutePath().getParent().getParent().resolve("pom.xml");
        }
        else if (Files.isDirectory(entry)) {
            return null;
        }
        else {
            String file = entry.getFileName().toString();
            Path versionDir = entry.getParent();
            String artifact = versionDir.getParent().getFileName().toString();
            pom = versionDir.resolve(artifact + "-" + versionDir.getFileName() + ".pom");
            if (!file.startsWith(artifact)) {
                return null;
            }
        }
        return Files.isRegularFile(pom) ? read(pom) : null;
    }

    /**
     * A reactor module's main output: {@code target/classes}, or the jar in {@code target} (phase package and later).
     */
    static boolean isModuleOutput(Path entry) {
        Path name = entry.getFileName();
        Path parent = entry.toAbsolutePath().getParent();
        if (name == null || parent == null || parent.getFileName() == null
                || !parent.getFileName().toString().equals("target")) {
            return false;
        }
        String file = name.toString();
        return Files.isDirectory(entry) ? file.equals("classes")
                : file.endsWith(".jar") && !file.endsWith("-tests.jar") && !file.endsWith("-sources.jar");
    }

    private static MavenCoordinates read(Path pom) {
        try {
            var factory = DocumentBuilderFactory.newInstance();
            factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            Element project = factory.newDocumentBuilder().parse(pom.toFile()).getDocumentElement();
            Element parent = child(project, "parent");
            String group = text(project, "groupId", parent == null ? null : text(parent, "groupId", null));
            String artifact = text(project, "artifactId", null);
            List<Dependency> dependencies = new ArrayList<>();
            Element declared = child(project, "dependencies");
            for (Node n = declared == null ? null : declared.getFirstChild(); n != null; n = n.getNextSibling()) {
                if (n instanceof Element d && d.getTagName().equals("dependency")) {
                    String scope = text(d, "scope", "compile");
                    if (scope.equals("test") || scope.equals("system") || scope.equals("import")) {
                        continue;
                    }
                    String g = text(d, "groupId", group).replace("${project.groupId}", group)
                            .replace("${groupId}", group);
                    boolean optional = "true".equals(text(d, "optional", "false")) || scope.equals("provided");
                    dependencies.add(new Dependency(g + ":" + text(d, "artifactId", null), optional));
                }
            }
            return new MavenCoordinates(group + ":" + artifact, dependencies);
        }
        catch (Exception | Error unreadable) {
            throw new IllegalStateException("cannot read " + pom + ": " + unreadable, unreadable);
        }
    }

    private static Element child(Element parent, String tag) {
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals(tag)) {
                return e;
            }
        }
        return null;
    }

    private static String text(Element parent, String tag, String otherwise) {
        Element e = child(parent, tag);
        return e == null ? otherwise : e.getTextContent().trim();
    }

    static List<Path> classPath() throws IOException {
        List<Path> entries = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            if (!entry.isBlank() && Files.exists(Path.of(entry))) {
                entries.add(Path.of(entry));
            }
        }
        return entries;
    }
}
