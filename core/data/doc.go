// Package data loads the datasets Faithlab evaluates on and holds them as
// plain float32 arrays.
//
// A Dataset is n samples of one shape (C, H, W; tabular data is D×1×1) in a
// single NCHW slice, with integer labels and class names. Images are scaled
// to [0, 1]; tabular features are standardised on the training split and the
// statistics are kept with the dataset (Standardization) so that a model can
// apply them to new data.
//
// Loaders read IDX (MNIST, Fashion-MNIST; raw or gzipped), CIFAR-10/100
// binary batches, image folders (one sub-folder per class), CSV with a
// header, .npy/.npz arrays, and generate a synthetic Gaussian mixture with a
// known discriminative direction. Every loader checks sizes against the
// file's length before allocating and returns errors that name the file and
// the problem. Each reads regular files only (a device such as /dev/zero or
// a pipe cannot be sized before reading) up to a limit stated in its doc
// comment; headers are read and checked before payloads, gzip streams may
// claim at most 64 times their size, and an .npz is read member by member,
// by name (NPZ).
//
// An image folder's images are checked from their headers before they are
// decoded: at most 64 MiB of pixels decoded (16 megapixels of 8-bit RGBA),
// no side over 65 535 pixels and neither side more than 1 000 times the
// other (a photograph is within 1:20; a 1×67 000 000 PNG is not a picture,
// and it would ask gigabytes of the resize), and for a JPEG at most 256 MiB
// in the decoder's own buffers, counted from its frame header (a
// progressive JPEG holds 4 bytes of coefficients per pixel and component).
// An image is resized along its longer axis first, so that the
// intermediate image holds at most size × √(width × height) pixels (7 MiB
// at size 224). Symbolic links in an image folder, to class folders and to
// images alike, are followed within the dataset's folder; one leading
// outside it is refused by name.
//
// An image folder read for a model (Options.Classes, Resize, Unlabelled;
// model.Header.ImageOptions sets them from the model's description):
//
//   - its class folders are matched to the model's classes, by name (as
//     listed, or with case, _ and - against spaces not mattering) or by
//     ImageNet WordNet id where the model lists them (ClassList): a folder
//     of 4 classes opens for a 1000-class model, labels the model's
//     indices, Classes its list. A folder that names no class is refused
//     with its name and the model's first classes; folders that name none,
//     as many as the classes, are the classes in lexical order (as for a
//     model trained on such a folder).
//   - with Unlabelled, a folder of images and no class folders opens
//     unlabelled (Dataset.Unlabelled, Y all 0), both parts all of it, for
//     a command that explains the predicted class (attribute, a campaign
//     of a model file, whose protocols that need labels are refused:
//     protocol.NeedsLabels); without it, such a folder is refused, saying
//     what to do.
//   - Resize says how images reach the model's side: squashed (Lanczos,
//     aspect not kept; the default) or torchvision's evaluation transform,
//     Resize(short) on the shorter side and CenterCrop(size), with
//     Pillow's bilinear weights and 8-bit rounding (equal to torchvision
//     0.14 on Pillow 9.4, pixel for pixel, on PNGs; JPEGs differ as Go's
//     decoder differs from libjpeg's). Only the crop is computed.
//
// An image folder's heads (Options.TrainHead, TestHead, a spec's
// train_samples and test_samples) are drawn balanced over its classes
// with Options.Seed (Dataset.Balanced: round-robin over the classes in a
// seeded order, each class's images in a seeded order), not taken in
// folder order; Drawn records where each drawn image sits in its split
// (SplitPositions: a maps file in the split's order still finds it).
//
// A dataset may carry a ground-truth mask per sample (Dataset.Masks, H×W
// values, 1 where the evidence for the label lies, 0 elsewhere), which the
// localisation metrics compare maps with. Two kinds of sets carry them:
//
//   - fashion-mnist-planted (planted.go), the planted-truth set: Fashion-MNIST's
//     garments shrunk into the central 20×20 pixels, with a 4×4 white patch
//     planted in the empty border at one of ten places; the place is the
//     label, drawn uniformly with Options.Seed and independently of the
//     garment, and the mask is the patch. A model that learns the set can
//     only use the patch: with it removed (set to 0) any model is at chance.
//   - an image folder with a MaskFolder (.masks) in its dataset folder: the
//     mask of <class>/<file> is .masks/<class>/<file> (under .masks/train/
//     and .masks/test/ for a set split so), a PNG or JPEG of the image's
//     size, in the mask where it is not black, resized by nearest neighbour.
//     Masks are all or none; a folder whose name begins with a dot is no
//     class.
//
// Open resolves a short id (fashion-mnist, fashion-mnist-planted, iris, wine,
// breast-cancer, digits, gmm, or gmm with its settings such as gmm:dim=64,
// ParseGMM) or a path to a train and a test split.
package data
