/// The version `entitle --version` prints and `entitle_build_info` exposes.
public enum EntitleVersion {
    public static let current = "0.10.0"
}
